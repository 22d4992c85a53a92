"""Loop vectorization: the translator behind graph/passes/vectorize.py and its building blocks."""
