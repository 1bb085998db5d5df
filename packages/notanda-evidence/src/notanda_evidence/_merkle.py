"""Merkle tree hashing, proofs and proof verification as RFC 6962 and RFC 9162 define them.

Leaves are hashed as ``SHA-256(0x00 || data)`` and interior nodes as
``SHA-256(0x01 || left || right)``; the tree over ``n`` leaves splits at the
largest power of two smaller than ``n``. Verification follows RFC 9162
sections 2.1.3.2 (inclusion) and 2.1.4.2 (consistency) step by step.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

__all__ = [
    "EMPTY_ROOT",
    "Frontier",
    "consistency_proof",
    "inclusion_proof",
    "leaf_hash",
    "node_hash",
    "prefix_roots",
    "root_of",
    "verify_consistency",
    "verify_inclusion",
]

#: The root of the empty tree: SHA-256 of the empty string.
EMPTY_ROOT = hashlib.sha256(b"").digest()


def leaf_hash(data: bytes) -> bytes:
    """Hash one leaf: ``SHA-256(0x00 || data)``."""
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """Hash one interior node: ``SHA-256(0x01 || left || right)``."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two strictly smaller than ``n`` (``n >= 2``)."""
    return 1 << ((n - 1).bit_length() - 1)


def _range_root(leaves: Sequence[bytes], lo: int, hi: int) -> bytes:
    """MTH of ``leaves[lo:hi]`` (leaf hashes), computed without recursion per node."""
    if hi - lo == 0:
        return EMPTY_ROOT
    frontier = Frontier()
    for index in range(lo, hi):
        frontier.append(leaves[index])
    return frontier.root()


def root_of(leaves: Sequence[bytes]) -> bytes:
    """The Merkle tree head root over a list of leaf hashes."""
    return _range_root(leaves, 0, len(leaves))


def prefix_roots(leaves: Sequence[bytes], sizes: Iterable[int]) -> dict[int, bytes]:
    """The root of the first ``n`` leaves for each ``n`` in *sizes*, in one pass.

    O(len(leaves) + len(sizes) * log n), so checking a hundred heads of a
    long log costs about one root computation. Sizes outside
    ``0..len(leaves)`` are left out of the answer.
    """
    wanted = sorted({n for n in sizes if 0 <= n <= len(leaves)})
    roots: dict[int, bytes] = {}
    frontier = Frontier()
    for n in wanted:
        while frontier.size < n:
            frontier.append(leaves[frontier.size])
        roots[n] = frontier.root()
    return roots


class Frontier:
    """The compact range of a growing tree: at most log2(n) subtree roots.

    Appending a leaf and computing the root are both O(log n), so a log can
    return a new head with every append without rehashing its history.
    """

    __slots__ = ("_nodes", "size")

    def __init__(self) -> None:
        self.size = 0
        # Roots of the perfect subtrees, largest first: one per set bit of size.
        self._nodes: list[bytes] = []

    def append(self, leaf: bytes) -> None:
        """Append one leaf hash."""
        node = leaf
        size = self.size
        while size & 1:
            node = node_hash(self._nodes.pop(), node)
            size >>= 1
        self._nodes.append(node)
        self.size += 1

    def root(self) -> bytes:
        """The current root (the empty root for an empty tree)."""
        if not self._nodes:
            return EMPTY_ROOT
        node = self._nodes[-1]
        for left in reversed(self._nodes[:-1]):
            node = node_hash(left, node)
        return node

    def copy(self) -> Frontier:
        """An independent copy."""
        other = Frontier()
        other.size = self.size
        other._nodes = list(self._nodes)
        return other


def inclusion_proof(leaves: Sequence[bytes], index: int, size: int | None = None) -> list[bytes]:
    """The audit path for leaf ``index`` in the tree of the first ``size`` leaves."""
    n = len(leaves) if size is None else size
    if not 0 <= index < n <= len(leaves):
        raise ValueError("leaf index outside the tree")
    path: list[bytes] = []
    lo, hi, m = 0, n, index
    # Walk down from the root; siblings are collected top-down and reversed.
    while hi - lo > 1:
        k = _split(hi - lo)
        if m < k:
            path.append(_range_root(leaves, lo + k, hi))
            hi = lo + k
        else:
            path.append(_range_root(leaves, lo, lo + k))
            lo, m = lo + k, m - k
    path.reverse()
    return path


def consistency_proof(
    leaves: Sequence[bytes], first: int, second: int | None = None
) -> list[bytes]:
    """The proof that the tree of ``first`` leaves is a prefix of the tree of ``second``."""
    n = len(leaves) if second is None else second
    if not 0 <= first <= n <= len(leaves):
        raise ValueError("tree sizes out of order")
    if first in (0, n):
        return []
    proof: list[bytes] = []
    lo, hi, m, complete = 0, n, first, True
    while m != hi - lo:
        k = _split(hi - lo)
        if m <= k:
            proof.append(_range_root(leaves, lo + k, hi))
            hi = lo + k
        else:
            proof.append(_range_root(leaves, lo, lo + k))
            lo, m, complete = lo + k, m - k, False
    if not complete:
        proof.append(_range_root(leaves, lo, hi))
    proof.reverse()
    return proof


def verify_inclusion(
    leaf: bytes, index: int, size: int, path: Sequence[bytes], root: bytes
) -> bool:
    """RFC 9162 section 2.1.3.2: does ``path`` prove ``leaf`` at ``index`` under ``root``?"""
    if index >= size or index < 0 or any(len(p) != 32 for p in path):
        return False
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_consistency(
    first: int, second: int, first_root: bytes, second_root: bytes, proof: Sequence[bytes]
) -> bool:
    """RFC 9162 section 2.1.4.2: is the tree ``(first, first_root)`` a prefix of the second?"""
    if first < 0 or second < first or any(len(p) != 32 for p in proof):
        return False
    if first == second:
        return not proof and first_root == second_root
    if first == 0:
        return not proof
    if not proof:
        return False
    path = list(proof)
    if first & (first - 1) == 0:
        path.insert(0, first_root)
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return fr == first_root and sr == second_root and sn == 0
