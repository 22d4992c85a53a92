"""Analyses over the graph that passes share: affine index forms and dependences (aliasing: graph/alias.py)."""
