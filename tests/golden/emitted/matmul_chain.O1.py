def matmul_chain(a, b):
    # programs.py:214  return (a @ b).T @ a
    return (a @ b).T @ a
