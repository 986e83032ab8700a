# Gradient Lab: the app and torch on python:3.11-slim. README.md, "Docker", says how to use it.
#
#   docker build -t gradient-lab .                  CPU-only torch (the default, the small image)
#   docker build -t gradient-lab:cuda \
#     --build-arg TORCH_INDEX_URL=https://download.pytorch.org/whl/cu128 .    torch with CUDA
#   docker run -p 8000:8000 gradient-lab            then open http://localhost:8000

# --- build: a virtual environment with torch and the project's dependencies -----------------
FROM python:3.11-slim AS build

# Where torch comes from. PyPI's Linux torch bundles several GB of CUDA libraries; the CPU index
# has a wheel of a few hundred MB, which is all the lessons need.
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
# Which torch, as a pip requirement: "torch==2.8.0", say, to pin one release.
ARG TORCH_SPEC=torch

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/venv/bin:$PATH
RUN python -m venv /opt/venv

# torch first and from its own index, so the project's plain "torch>=2.3" is met already when
# the other dependencies come from PyPI, and pip never reaches for PyPI's CUDA build.
RUN pip install --index-url "$TORCH_INDEX_URL" "$TORCH_SPEC"

# The rest of the dependencies, read from pyproject.toml so they are written down once (a layer
# of its own, kept while only the code changes), then the project itself, as a wheel would be.
COPY pyproject.toml /tmp/pyproject.toml
RUN python -c "import tomllib; \
print('\n'.join(tomllib.load(open('/tmp/pyproject.toml', 'rb'))['project']['dependencies']))" \
      > /tmp/requirements.txt \
 && pip install -r /tmp/requirements.txt
COPY pyproject.toml README.md hatch_build.py /src/
COPY gradient_lab/ /src/gradient_lab/
COPY static/ /src/static/
COPY templates/ /src/templates/
RUN pip install --no-deps /src

# --- run: the same base, the environment with the package in it; no build tools, not root ---
FROM python:3.11-slim

# libseccomp2 compiles the runner's system-call allow-list (slim images carry it for apt; named
# here so the walls never depend on that). tini is PID 1: children a lost zygote leaves behind
# are reparented to PID 1, and tini reaps them (the server, as PID 1, would leave zombies).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libseccomp2 tini \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 lab
COPY --from=build /opt/venv /opt/venv

WORKDIR /home/lab

# APP_HOST: the server's default, 127.0.0.1, would not be reachable through a published port.
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    APP_HOST=0.0.0.0 \
    APP_PORT=8000

# Connections: the server raises its descriptor limit from the soft to the hard one at start and
# serves at most APP_CONNECTIONS_MAX within it (gradient_lab/web/edge.py). Docker's and podman's
# hard limit (524288 or more) is plenty; where a runtime sets less, run with
# `--ulimit nofile=65536:65536`.
USER lab
EXPOSE 8000
# urllib rather than curl, which the slim image lacks. urlopen raises on any status but 2xx.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('APP_PORT', '8000') + '/healthz', timeout=4)"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["gradient-lab"]
