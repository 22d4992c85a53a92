"""Loops over small matrices (graph/vectorize/batched.py, updates.py, nest.py): kernels written the
way physics codes write them, each a nest whose iterations multiply, gather and accumulate small
matrices. Used by tests/graph/vectorize/test_vectorize_batched.py."""

import numpy as np


def neighbour_products(nbr, G, H, out):
    """out[k, a] += sum over b of G[k, nbr[a, b]] @ H[a, b]: a gather by a neighbour table."""
    for k in range(G.shape[0]):
        for a in range(nbr.shape[0]):
            for b in range(nbr.shape[1]):
                out[k, a] += G[k, nbr[a, b]] @ H[a, b]
    return out


def self_energy(nbr, dH, G, D, sigma):
    """A self-energy sum: a branch on loop indices only, products of products, a neighbour table."""
    for k in range(G.shape[0]):
        for e in range(G.shape[1]):
            for w in range(D.shape[0]):
                for i in range(D.shape[-1]):
                    for a in range(nbr.shape[0]):
                        for b in range(nbr.shape[1]):
                            if e - w >= 0:
                                left = G[k, e - w, nbr[a, b]] @ dH[a, b, i]
                                sigma[k, e, a] += left @ (dH[a, b, i] * D[w, a, b, i])
    return sigma


def row_gathers(idx, G, H):
    """A stack of matrices gathered by a row of indices, times one matrix, per iteration."""
    out = np.zeros((idx.shape[0], idx.shape[1], G.shape[1], H.shape[2]), dtype=G.dtype)
    for a in range(idx.shape[0]):
        out[a] = G[idx[a]] @ H[a]
    return out


def view_accumulate(A, B, out):
    """A row of `out` viewed in the body and updated in place by a product of each iteration."""
    for j in range(A.shape[0]):
        row = out[1]
        row += A[j] @ B[j]
    return out


def fresh_per_iteration(z, H, out):
    """A matrix made in every iteration and filled in place: a stack of them, one per iteration."""
    for i in range(z.shape[0]):
        T = np.zeros((H.shape[1], H.shape[2]), dtype=H.dtype)
        T += z[i] * H[0]
        T += H[1]
        out[i] = T @ H[2]
    return out


def fresh_then_read_twice(z, H, out):
    """The fresh matrix is also read before its update: it stays a loop (the update would show)."""
    for i in range(z.shape[0]):
        T = np.zeros((H.shape[1], H.shape[2]), dtype=H.dtype)
        before = T
        T += z[i] * H[0]
        out[i] = T + before
    return out


def float32_accumulate(A, out):
    """`out[0] += A[j]` in float32 from float64 terms: it rounds in every iteration, stays a loop."""
    for j in range(A.shape[0]):
        row = out[0]
        row += A[j]
    return out


def solve_each(A, b):
    """One small system per iteration into an array of the function's own."""
    x = np.zeros(b.shape, dtype=np.result_type(A.dtype, b.dtype, np.float64))
    for i in range(A.shape[0]):
        x[i] = np.linalg.solve(A[i], b[i])
    return x


def resolvent_sums(A, z, Y):
    """The contour-integral shape: a matrix built per point, solved, signed and summed twice."""
    P0 = np.zeros((A.shape[1], Y.shape[1]), dtype=np.complex128)
    P1 = np.zeros((A.shape[1], Y.shape[1]), dtype=np.complex128)
    for p in z:
        T = np.zeros((A.shape[1], A.shape[2]), dtype=np.complex128)
        for n in range(A.shape[0]):
            T += np.power(p, n - 1.0) * A[n]
        X = np.linalg.solve(T, Y)
        if abs(p) < 1.0:
            X = -X
        P0 += X
        P1 += p * X
    return P0, P1


def inverse_sum(A):
    """A sum of inverses, carried."""
    total = np.zeros((A.shape[1], A.shape[2]))
    for i in range(A.shape[0]):
        total += np.linalg.inv(A[i])
    return total


def solve_into(A, b, x):
    """Solutions written into an argument: a singular matrix must leave the earlier rows written."""
    for i in range(A.shape[0]):
        x[i] = np.linalg.solve(A[i], b[i])
    return x


def determinants(A):
    out = np.zeros(A.shape[0])
    for i in range(A.shape[0]):
        out[i] = 2.0 * np.linalg.det(A[i])
    return out
