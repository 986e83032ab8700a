"""Class mode: a teacher leads a room, every student's screen follows the teacher's lab
address, and the class predicts before the answer is revealed.

The labs stay stateless: a lab's state is its address, and the room carries only that, the
question of the moment and its answers. model.py says what a room holds, store.py how it is
kept (sqlite.py, redis.py), hub.py how changes reach this process's screens, and service.py
what the routes (gradient_lab/web/routes/rooms.py) call.
"""
