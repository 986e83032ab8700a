"""The graph lab: record a program's run, walk grad_fn into a Graph, describe its nodes and
values, check custom Functions with gradcheck; examples.py holds the tutorial's programs."""
