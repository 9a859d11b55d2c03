#!/usr/bin/env python3
"""
test/bench/fill_model.py: a model of ddb's leaf level under a row-by-row
load (one insert at a time, as INSERT ... SELECT and PutItem load), to
choose a leaf split policy before building it (doc/performance-history.md,
"Issue 19: the row path's fill").

Items are the benchmark's (test/bench/setup.sql): partition p of P has
items at positions 0..99 with sort keys bench_sk(position); item size is
the bench's 232 bytes on the page plus a 4-byte line pointer.  Keys are
encoded as ddb orders them (hash of the partition key first, then the
partition key, then the sort key), item keys with a 6-byte suffix.  Pages
have ddb_page.h's capacity; a leaf keeps the fillfactor's reserve free for
a new key, as ddb_tree_insert_at does; splits are ddb_tree.c's
(ddb_leaf_split_after_new, then the balanced ddb_leaf_split_point), with
the separator truncated and the high key sized as ddb stores it.  Internal
pages are modelled only as far as which leaves share a parent (a parent
holds up to FANOUT downlinks and splits in two).

Policies (doc/performance-history.md has what each gives):
  today     the splits above
  shift     before splitting a full leaf, move its fewest last items (the
            new item among them when it sorts there) that make room for the
            new item to the right sibling, when that sibling shares the
            parent and stays within the fillfactor; else split as today
  balance   as shift, but move as many as even out the two leaves
  cascadeN  as shift; when the right sibling is too full, first make room
            in it the same way, up to N leaves further right
  split3    as shift; when the right sibling is too full, the two leaves'
            items in three even parts: the sibling's last third to a new
            leaf, then the leaf's last third to the sibling (a B*-tree's
            2-to-3 split, items still moving right only)
  shiftrun  as shift, moving the new item's whole partition run when the
            sibling takes it
  POLICY+mid  also split right after a new item that lands inside its
            partition's run (the bench's sort keys put a month's first days
            after its last ones)
  POLICY+runappend  a batch's run of several partitions' new items splits
            right after the last one that extends its partition (--batch)

--batch N loads as COPY's row path does (ddb_tree_insert_multi: N rows
at a time, sorted, placed leaf by leaf, a full leaf split once for the
rows that belong on it); COPY hands over about 333 of the bench's rows at
a time (its 64 kB buffer).

Arrivals: interleaved (item i to partition i mod P, the bench), one
partition after another (sequential), random order.  --monotonic gives
each partition sort keys in arrival order (no day wraps).  The model
checks the leaf level after each load (key order, bounds, page sizes).

  python3 test/bench/fill_model.py [--partitions 1000] [--items 100]
      [--fillfactor 95 ...] [--policy today shift ...]
      [--arrival interleaved sequential random] [--monotonic] [--batch 333]
"""
import argparse
import hashlib
import random
import struct
from bisect import bisect_right

BLCKSZ = 8192
CAPACITY = BLCKSZ - 24 - 16          # page header, MAXALIGN'd special space
LP = 4
ITEM = 232                           # the bench's leaf item, MAXALIGN'd
FANOUT = 300                         # downlinks an internal page holds


def maxalign(n):
    return (n + 7) & ~7


def key_item_size(seplen):
    """ddb_key_item_size: a high key or downlink of seplen key bytes."""
    return maxalign(6 + seplen) + LP


def bench_sk(s):
    return 'ORDER#2025-%02d-%02d#%04d' % (1 + s * 12 // 100, 1 + s % 28, s)


def monotonic_sk(s):
    return 'ORDER#2025-%02d-%02d#%04d' % (1 + s * 12 // 100, 1 + s * 28 // 100, s)


def part_prefix(p):
    pk = ('CUST#%d' % p).encode()
    h = hashlib.md5(pk).digest()[:4]
    return h + struct.pack('>H', len(pk)) + pk


def item_key(p, s, serial):
    sk = bench_sk(s).encode()
    return part_prefix(p) + struct.pack('>H', len(sk)) + sk + struct.pack('>Q', (1 << 48) - serial)[2:]


def trunc_sep(left, right):
    """ddb_truncated_separator: shortest prefix of right above left."""
    n = min(len(left), len(right))
    i = 0
    while i < n and left[i] == right[i]:
        i += 1
    return right[:min(i + 1, len(right))]


class Leaf:
    __slots__ = ('keys', 'sizes', 'used', 'hk', 'parent')

    def __init__(self, parent):
        self.keys = []
        self.sizes = []
        self.used = 0                # items and their line pointers
        self.hk = None               # high key bytes, None = rightmost
        self.parent = parent

    def space(self):
        return self.used + (key_item_size(len(self.hk)) if self.hk is not None else 0)


class Tree:
    def __init__(self, fillfactor, policy):
        self.reserve = CAPACITY * (100 - fillfactor) // 100
        self.midsplit = policy.endswith('+mid')
        policy = policy[:-4] if self.midsplit else policy
        self.runappend = policy.endswith('+runappend')
        policy = policy[:-10] if self.runappend else policy
        self.policy = policy
        # cascadeN: make room in up to N leaves to the right
        self.depth = int(policy[7:] or 1) if policy.startswith('cascade') else 0
        self.leaves = [Leaf(0)]
        self.lows = [b'']            # low bound of each leaf
        self.parent_n = {0: 1}
        self.nparents = 1
        self.splits = 0
        self.shifts = 0
        self.moved = 0

    def fits(self, leaf, size):
        # PageGetFreeSpace (less one line pointer) >= item + reserve
        return CAPACITY - leaf.space() - LP >= size - LP + self.reserve

    def insert(self, key, size=ITEM + LP):
        while True:
            i = bisect_right(self.lows, key) - 1
            leaf = self.leaves[i]
            if self.fits(leaf, size):
                pos = bisect_right(leaf.keys, key)
                leaf.keys.insert(pos, key)
                leaf.sizes.insert(pos, size)
                leaf.used += size
                return
            if self.policy != 'today' and self.shift(i, key, size):
                continue
            if (self.policy.startswith('cascade') or self.policy == 'split3') and self.make_room_right(i):
                continue
            self.split(i, key, size)

    def make_room_right(self, i):
        """The right sibling is too full to take the overflow: make room
        in it by moving its own last items on to its right sibling
        (cascade) or by splitting it in two (split3: the 2-to-3 split of
        a B*-tree, items still moving right only)."""
        if i + 1 >= len(self.leaves) or self.leaves[i + 1].parent != self.leaves[i].parent:
            return False
        r = self.leaves[i + 1]
        if len(r.keys) < 2:
            return False
        if self.policy.startswith('cascade'):
            return self.cascade(i + 1, self.depth - 1)
        # split3: the two leaves' items in three even parts; the right
        # sibling's last third to a new leaf, the leaf's last third to it
        leaf = self.leaves[i]
        total = leaf.used + r.used
        acc, c2 = leaf.used, None
        for k, s in enumerate(r.sizes):
            if acc >= 2 * total / 3:
                c2 = k
                break
            acc += s
        if c2 is None or c2 == 0:
            return False
        self.split(i + 1, None, 0, nleft=c2)
        acc, c1 = 0, None
        for k, s in enumerate(leaf.sizes):
            if acc >= total / 3:
                c1 = k
                break
            acc += s
        if c1 is None or c1 == 0:
            return True
        moved = sum(leaf.sizes[c1:])
        sep = trunc_sep(leaf.keys[c1 - 1], leaf.keys[c1])
        if r.space() + moved > CAPACITY - self.reserve:
            return True
        self.move_right(i, c1, sep)
        return True

    # -- today's split ----------------------------------------------------
    def split(self, i, key, size, nleft=None):
        leaf = self.leaves[i]
        oldhk = key_item_size(len(leaf.hk)) if leaf.hk is not None else 0
        if key is None:
            vkey, vsize, newpos = list(leaf.keys), list(leaf.sizes), len(leaf.keys) + 1
            b = nleft if nleft is not None else self.balanced(vkey, vsize, oldhk)
        else:
            newpos = bisect_right(leaf.keys, key)
            vkey = leaf.keys[:newpos] + [key] + leaf.keys[newpos:]
            vsize = leaf.sizes[:newpos] + [size + self.reserve] + leaf.sizes[newpos:]
            b = self.after_new(vkey, vsize, newpos, leaf.hk, oldhk)
        if b < 0:
            b = self.balanced(vkey, vsize, oldhk)
        if b < 0:
            raise RuntimeError('no split point')
        sep = trunc_sep(vkey[b - 1], vkey[b])
        self.do_split(i, b if b <= newpos else b - 1, sep)

    def move_right(self, i, cut, sep):
        """Move leaf i's items from 'cut' on to the front of its right
        sibling, the separator between them becoming 'sep'."""
        leaf, right = self.leaves[i], self.leaves[i + 1]
        mk, ms = leaf.keys[cut:], leaf.sizes[cut:]
        del leaf.keys[cut:]
        del leaf.sizes[cut:]
        leaf.used -= sum(ms)
        right.keys[0:0] = mk
        right.sizes[0:0] = ms
        right.used += sum(ms)
        leaf.hk = sep
        self.lows[i + 1] = sep
        self.shifts += 1
        self.moved += len(mk)

    def add_downlink(self, j):
        p = self.leaves[j].parent
        self.parent_n[p] += 1
        if self.parent_n[p] > FANOUT:
            # the parent splits in two: the right half of its leaves moves
            idx = [k for k, lf in enumerate(self.leaves) if lf.parent == p]
            newp = self.nparents
            self.nparents += 1
            half = idx[len(idx) // 2:]
            for k in half:
                self.leaves[k].parent = newp
            self.parent_n[p] = len(idx) - len(half)
            self.parent_n[newp] = len(half)

    def after_new(self, vkey, vsize, newpos, hk, oldhk):
        nk = vkey[newpos]
        plen = 6 + struct.unpack('>H', nk[4:6])[0]
        part = nk[:plen]
        nv = len(vkey)
        if newpos < 2:
            return -1
        for j in (1, 2):
            if not vkey[newpos - j].startswith(part):
                return -1
        cand = []
        if newpos + 1 < nv:
            if vkey[newpos + 1].startswith(part):
                if not self.midsplit:
                    return -1
                # an insert inside its partition's run (the bench's days
                # that sort before the month's last): split after it, the
                # items after it going right, as nbtree splits after a new
                # item whose successors follow it
                cand.append(newpos + 1)
                return self.first_fitting(cand, vkey, vsize, oldhk)
            cand.append(newpos + 1)
        elif hk is not None and hk.startswith(part):
            return -1
        rs = newpos - 2
        while rs > 0 and vkey[rs - 1].startswith(part):
            rs -= 1
        if rs > 0:
            cand.append(rs)
        cand.append(newpos)
        return self.first_fitting(cand, vkey, vsize, oldhk)

    def first_fitting(self, cand, vkey, vsize, oldhk):
        total = sum(vsize)
        for v in cand:
            left = sum(vsize[:v])
            sep = trunc_sep(vkey[v - 1], vkey[v])
            if (left >= CAPACITY // 10 and left + key_item_size(len(sep)) <= CAPACITY
                    and total - left + oldhk <= CAPACITY):
                return v
        return -1

    def balanced(self, vkey, vsize, oldhk):
        total = sum(vsize)
        best, bestdiff = -1, None
        left = vsize[0]
        for v in range(1, len(vkey)):
            sep = trunc_sep(vkey[v - 1], vkey[v])
            l = left + key_item_size(len(sep))
            r = total - left + oldhk
            if l <= CAPACITY and r <= CAPACITY:
                d = abs(l - r)
                if best < 0 or d < bestdiff:
                    best, bestdiff = v, d
            left += vsize[v]
        return best

    def cascade(self, j, depth):
        """Make room for one more item in leaf j (below its fillfactor) by
        moving its fewest last items to its right sibling, first making
        room there the same way, up to 'depth' more leaves to the right;
        all within one parent."""
        leaf = self.leaves[j]
        if j + 1 >= len(self.leaves) or self.leaves[j + 1].parent != leaf.parent:
            return False
        if len(leaf.keys) < 2:
            return False
        limit = CAPACITY - self.reserve
        for k in range(1, len(leaf.keys)):
            cut = len(leaf.keys) - k
            moved = sum(leaf.sizes[cut:])
            sep = trunc_sep(leaf.keys[cut - 1], leaf.keys[cut])
            if leaf.used - moved + key_item_size(len(sep)) + ITEM + LP <= limit:
                break
        else:
            return False
        rr = self.leaves[j + 1]
        if rr.space() + moved > limit:
            if depth <= 0 or not self.cascade(j + 1, depth - 1) or rr.space() + moved > limit:
                return False
        self.move_right(j, cut, sep)
        return True

    # -- the candidate: move the overflow to the right sibling -------------
    def shift(self, i, key, size):
        """Move the leaf's last items (over the virtual sequence, the new
        item in its place) to the right sibling; the new item is then
        inserted on whichever side it belongs."""
        if i + 1 >= len(self.leaves):
            return False
        leaf, right = self.leaves[i], self.leaves[i + 1]
        if right.parent != leaf.parent:
            return False
        newpos = bisect_right(leaf.keys, key)
        vkey = leaf.keys[:newpos] + [key] + leaf.keys[newpos:]
        vsize = leaf.sizes[:newpos] + [size] + leaf.sizes[newpos:]
        nv = len(vkey)
        limit = CAPACITY - self.reserve      # a leaf at its fillfactor

        def sides(c):
            sep = trunc_sep(vkey[c - 1], vkey[c])
            lsp = sum(vsize[:c]) + key_item_size(len(sep))
            rsp = sum(vsize[c:]) + right.space()
            if newpos < c:
                ok = lsp + self.reserve <= CAPACITY and rsp <= limit
            else:
                ok = rsp + self.reserve <= CAPACITY
            return ok, lsp, rsp

        # the fewest items moved: the largest cut whose left side has room
        cs = -1
        for c in range(nv - 1, 0, -1):
            sep = trunc_sep(vkey[c - 1], vkey[c])
            lsp = sum(vsize[:c]) + key_item_size(len(sep))
            if newpos >= c or lsp + self.reserve <= CAPACITY:
                cs = c
                break
        if cs < 1 or not sides(cs)[0]:
            return False
        c = cs
        if self.policy == 'shiftrun' and newpos < nv - 1 or self.policy == 'shiftrun' and newpos >= 2:
            # the new item's partition's whole run on the page, from the
            # new item's partition start, when the right sibling takes it
            part = key[:6 + struct.unpack('>H', key[4:6])[0]]
            rs = newpos
            while rs > 0 and vkey[rs - 1].startswith(part):
                rs -= 1
            if 0 < rs < cs and all(vkey[v].startswith(part) for v in range(rs, cs)) and sides(rs)[0]:
                c = rs
        if self.policy == 'balance':
            bestd = None
            for c2 in range(cs, 0, -1):
                ok, lsp, rsp = sides(c2)
                if not ok:
                    break
                d = abs(lsp - rsp)
                if bestd is None or d < bestd:
                    c, bestd = c2, d
        # the existing items kept: the cut, less the new item if left of it
        self.move_right(i, c if c <= newpos else c - 1, trunc_sep(vkey[c - 1], vkey[c]))
        return True

    # -- a batch of new keys (ddb_tree_insert_multi: COPY's row path) -----
    def insert_batch(self, keys, size=ITEM + LP):
        keys = sorted(keys)
        n = len(keys)
        i = 0
        made_room_at = -1
        while i < n:
            li = bisect_right(self.lows, keys[i]) - 1
            leaf = self.leaves[li]
            free = CAPACITY - leaf.space()
            need = 0
            run = []
            j = i
            full = False
            while j < n:
                if leaf.hk is not None and keys[j] >= leaf.hk:
                    break
                if need + size + self.reserve > free:
                    full = True
                    break
                run.append(keys[j])
                need += size
                j += 1
            pend = []
            if full:
                psize = 0
                for k in range(j, n):
                    if (leaf.hk is not None and keys[k] >= leaf.hk) or psize + size > CAPACITY:
                        break
                    pend.append(keys[k])
                    psize += size
            split = len(pend) > 0 and not (j == i and made_room_at == i)
            for k in run:
                pos = bisect_right(leaf.keys, k)
                leaf.keys.insert(pos, k)
                leaf.sizes.insert(pos, size)
                leaf.used += size
            if split:
                if not (self.policy != 'today' and len(pend) == 1 and self.shift(li, pend[0], size)):
                    self.split_for_run(li, pend, size)
                made_room_at = j
                i = j
                continue
            if j == i:
                self.insert(keys[i], size)
                j = i + 1
            i = j

    def split_for_run(self, i, pend, size):
        """ddb_split_point_for_run, then the single item's split."""
        leaf = self.leaves[i]
        oldhk = key_item_size(len(leaf.hk)) if leaf.hk is not None else 0
        for k in range(len(pend), 1, -1):
            vkey = sorted(leaf.keys + pend[:k])
            new = set(pend[:k])
            isnew = [x in new for x in vkey]
            vsize = [size] * len(vkey)
            b = self.split_run_point(vkey, vsize, isnew, oldhk, leaf.hk)
            if b >= 0:
                nleft = sum(1 for v in range(b) if not isnew[v])
                self.do_split(i, nleft, trunc_sep(vkey[b - 1], vkey[b]))
                return
        self.split(i, pend[0], len(pend) * size)

    def split_run_point(self, vkey, vsize, isnew, oldhk, hk):
        """ddb_leaf_split_run."""
        nv = len(vkey)
        total = sum(vsize)
        idx = [v for v in range(nv) if isnew[v]]
        firstnew, lastnew = idx[0], idx[-1]
        cand = []
        fk = vkey[firstnew]
        part = fk[:6 + struct.unpack('>H', fk[4:6])[0]]
        ext = firstnew >= 2 and all(vkey[firstnew - j].startswith(part) for j in (1, 2))
        ext = ext and vkey[lastnew].startswith(part)
        if ext and lastnew + 1 < nv and vkey[lastnew + 1].startswith(part):
            ext = False
        if ext and lastnew + 1 == nv and hk is not None and hk.startswith(part):
            ext = False
        if ext:
            rs = firstnew - 2
            while rs > 0 and vkey[rs - 1].startswith(part):
                rs -= 1
            if lastnew + 1 < nv:
                cand.append(lastnew + 1)
            if rs > 0:
                cand.append(rs)
            cand.append(firstnew)
        if self.runappend and not ext:
            cand = self.run_append_cands(vkey, isnew, hk)
            ext = bool(cand)
        nnew = len(idx)
        for pas in range(3):
            if pas == 0:
                cs = cand
            elif pas == 1:
                if ext:
                    continue
                cs = ([firstnew] if firstnew > 0 else []) + ([lastnew + 1] if lastnew + 1 < nv else [])
            else:
                cs = list(range(1, nv))
            best, bestd = -1, None
            for v in cs:
                left = sum(vsize[:v])
                nl = sum(1 for x in range(v) if isnew[x])
                sep = trunc_sep(vkey[v - 1], vkey[v])
                l = left + key_item_size(len(sep)) + (self.reserve if nl > 0 else 0)
                r = total - left + oldhk + (self.reserve if nl < nnew else 0)
                if l > CAPACITY or r > CAPACITY:
                    continue
                if pas == 0:
                    if left < CAPACITY // 10:
                        continue
                    return v
                d = abs(l - r)
                if best < 0 or d < bestd:
                    best, bestd = v, d
            if best >= 0:
                return best
        return -1

    def run_append_cands(self, vkey, isnew, hk):
        """The variant: the run's items each extend their partition; split
        right after the last such item that leaves a full left half (the
        single item's appending split, for a run of several partitions),
        latest first."""
        nv = len(vkey)
        cands = []
        for v in range(nv):
            if not isnew[v] or v < 2:
                continue
            k = vkey[v]
            part = k[:6 + struct.unpack('>H', k[4:6])[0]]
            if not (vkey[v - 1].startswith(part) and vkey[v - 2].startswith(part)):
                continue
            nxt = vkey[v + 1] if v + 1 < nv else hk
            if nxt is not None and nxt.startswith(part):
                continue
            if v + 1 < nv:
                cands.append(v + 1)
        return cands[::-1]

    def do_split(self, i, nleft, sep):
        leaf = self.leaves[i]
        right = Leaf(leaf.parent)
        right.keys = leaf.keys[nleft:]
        right.sizes = leaf.sizes[nleft:]
        right.used = sum(right.sizes)
        right.hk = leaf.hk
        del leaf.keys[nleft:]
        del leaf.sizes[nleft:]
        leaf.used = sum(leaf.sizes)
        leaf.hk = sep
        self.leaves.insert(i + 1, right)
        self.lows.insert(i + 1, sep)
        self.splits += 1
        self.add_downlink(i + 1)

    def stats(self):
        used = sum(lf.used for lf in self.leaves)
        return used / (len(self.leaves) * CAPACITY), len(self.leaves)


def arrivals(P, N, how, seed=1):
    order = [(i % P, i // P) for i in range(P * N)]
    if how == 'sequential':
        order.sort()
    elif how == 'random':
        random.Random(seed).shuffle(order)
    return order


def run(P, N, ff, policy, how, batch=0):
    t = Tree(ff, policy)
    keys = [item_key(p, s, serial) for serial, (p, s) in enumerate(arrivals(P, N, how))]
    if batch:
        for b in range(0, len(keys), batch):
            t.insert_batch(keys[b:b + batch])
    else:
        for k in keys:
            t.insert(k)
    fill, leaves = t.stats()
    # every leaf within its bounds, items in order
    allkeys = [k for lf in t.leaves for k in lf.keys]
    assert allkeys == sorted(allkeys) and len(allkeys) == P * N
    for j, lf in enumerate(t.leaves):
        assert lf.space() <= CAPACITY
        assert all(t.lows[j] <= k for k in lf.keys)
        assert lf.hk is None or all(k < lf.hk for k in lf.keys)
    return fill, leaves, t.splits, t.shifts, t.moved


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--partitions', type=int, default=1000)
    ap.add_argument('--items', type=int, default=100)
    ap.add_argument('--fillfactor', type=int, nargs='+', default=[95])
    ap.add_argument('--policy', nargs='+', default=['today', 'shift', 'balance'])
    ap.add_argument('--arrival', nargs='+', default=['interleaved', 'sequential', 'random'])
    ap.add_argument('--monotonic', action='store_true')
    ap.add_argument('--batch', type=int, default=0,
                    help="COPY's row path: batches of this many rows (1000)")
    a = ap.parse_args()
    if a.monotonic:
        global bench_sk
        bench_sk = monotonic_sk
    print('| arrival | fillfactor | policy | leaf fill | leaves | splits | shifts | items moved |')
    print('|---|---:|---|---:|---:|---:|---:|---:|')
    for how in a.arrival:
        for ff in a.fillfactor:
            for pol in a.policy:
                fill, leaves, splits, shifts, moved = run(a.partitions, a.items, ff, pol, how, a.batch)
                print('| %s | %d | %s | %.3f | %d | %d | %d | %d |'
                      % (how, ff, pol, fill, leaves, splits, shifts, moved), flush=True)


if __name__ == '__main__':
    main()
