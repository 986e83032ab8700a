"""GET /graph and POST /api/graph. (Being written: see the runner issue.)"""

from fastapi import APIRouter

router = APIRouter()
