"""Analyses over the graph that passes share: affine index forms, dependences, aliasing."""
