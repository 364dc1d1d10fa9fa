"""The mining kernel: a depth-first projection miner, compiled, resumable.

Each row holds exactly one item per attribute, so one pass over a node's rows tallies every
child on every later attribute (no candidate generation, no intersections); each child's rows
are then copied contiguously and re-compressed on the attributes still to come. The kernel
runs until a quota of work is done, the slice cap is passed or an array is too small, and
returns to its driver (:mod:`divergence.mining.mining_driver`), which grows the arrays, checks the
budget, reports progress and calls it again: a few milliseconds a call.
"""
from __future__ import annotations

import numpy as np

from ..kernels.compiled import ArgType, Kernel, b1, f8, i4, i8, kernel

__all__ = ["mine_step", "mine_step8", "fill_tables", "root_tallies", "root_tallies8", "root_fingerprints",
           "root_fingerprints8", "expand_codes", "DONE", "YIELD",
           "ROOM", "FULL", "N_STATE", "N_FRAME", "S_DEPTH", "S_NOUT", "S_WORK", "S_NEED_C", "S_NEED_W", "S_NEED_F",
           "S_NEED_I", "S_NEED_HT", "S_NEED_OUT", "S_NEED_TAB", "S_NEED_R", "S_EAGER", "S_ROOT_SCAN", "F_NEXT", "F_NK",
           "EAGER", "ROOT_SCAN"]

#: status of a call of mine_step
DONE, YIELD, ROOM, FULL = 0, 1, 2, 3
#: slots of the scalar state ``st``
S_DEPTH, S_TOP_C, S_TOP_W, S_TOP_F, S_TOP_I, S_NOUT, S_TOP_R, S_WORK, S_STARTED = range(9)
S_NEED_C, S_NEED_W, S_NEED_F, S_NEED_I, S_NEED_HT, S_NEED_OUT, S_NEED_TAB, S_NEED_R = range(9, 17)
#: the sizes that choose how a table is read (set by the driver: EAGER and ROOT_SCAN by default)
S_EAGER, S_ROOT_SCAN = 17, 18
N_STATE = 19
#: rows of the frame table ``frames`` (one column per depth)
F_C, F_R, F_TOP_R, F_M, F_A0, F_KIDS, F_NK, F_NEXT, F_PERM, F_PCOL, F_TOP_C, F_TOP_W, F_TOP_F, F_TOP_I = range(14)
N_FRAME = 14
#: a kid of at most this many tallies and fingerprints (rows x their number: 4 MiB) has them copied
#: into its own rows of sums as its rows come, as a small table reads fastest; a larger one refers
#: to its rows where they are until rows merge
EAGER = 1 << 19
#: a root's table of more rows than this is read whole for each of its kids, a row taken when it holds
#: the kid's item (in row order, as the counting sort orders them), instead of sorted into an order of
#: 4 bytes a row: 37 MiB at 10**7 distinct rows, for a pass over the column per item
ROOT_SCAN = 1 << 20


@kernel
def _slot(h, mask):
    """Hash-table slot of a 64-bit key (Fibonacci hashing)."""
    return np.int64((np.uint64(h) * np.uint64(11400714819323198485)) >> np.uint64(17)) & mask


@kernel
def _items_of(e, out_parent, out_attr, out_val, buf_a, buf_v):
    """The items of output e, in attribute order, into buf_a/buf_v; returns their number."""
    k = 0
    node = e
    while node > 0:
        buf_a[k] = out_attr[node]
        buf_v[k] = out_val[node]
        k += 1
        node = out_parent[node]
    for j in range(k // 2):
        ta = buf_a[j]
        tv = buf_v[j]
        buf_a[j] = buf_a[k - 1 - j]
        buf_v[j] = buf_v[k - 1 - j]
        buf_a[k - 1 - j] = ta
        buf_v[k - 1 - j] = tv
    return k


@kernel
def _is_subset_entry(e, pa, pv, n_path, skip, a, v, out_parent, out_attr, out_val, out_dead):
    """Whether output e is the itemset path∖{path[skip]}∪{(a, v)} (a after every path item),
    and no node on its chain is dead (a superseded description and its extensions)."""
    if e <= 0 or out_attr[e] != a or out_val[e] != v or out_dead[e]:
        return False
    node = out_parent[e]
    k = n_path - 1
    while node > 0:
        if k == skip:
            k -= 1
        if k < 0 or out_attr[node] != pa[k] or out_val[node] != pv[k] or out_dead[node]:
            return False
        k -= 1
        node = out_parent[node]
    if k == skip:
        k -= 1
    return k < 0


@kernel
def _smaller(e, pa, pv, n_path, a, v, out_parent, out_attr, out_val, buf_a, buf_v):
    """Whether output e's description sorts before path∪{(a, v)}: fewer items, or at the first
    attribute where they differ e has an item the other lacks, or a smaller value there."""
    ne = _items_of(e, out_parent, out_attr, out_val, buf_a, buf_v)
    if ne != n_path + 1:
        return ne < n_path + 1
    for k in range(ne):
        ga = pa[k] if k < n_path else a
        gv = pv[k] if k < n_path else v
        if buf_a[k] != ga:
            return buf_a[k] < ga
        if buf_v[k] != gv:
            return buf_v[k] < gv
    return False


@kernel(i4[:, ::1], f8[:, ::1], i8[:, ::1], i8[::1], f8, i8, i8, i8, i8, i8[::1], i8[::1],
        i8[::1], i8[:, ::1], i4[::1], f8[::1], i8[::1], i4[::1], i4[::1], i4[::1],
        i8[::1], i4[::1], i4[::1], f8[:, ::1], i8[:, ::1], i8[::1], b1[::1], i8[::1], i8[::1])
def mine_step(codes, w, fp, n_values, min_count, max_length, exhaustive, cap, quota, item_hash,
              expand_ids, st, frames, a_codes, a_w, a_fp, a_int, ht, a_ref,
              out_parent, out_attr, out_val, out_w, out_fp, out_ih, out_dead, gtab, ctab):
    """Depth-first projection mining, resumable: runs until done, until ``quota`` units of work
    (rows times columns visited), until more than ``cap`` itemsets are out, or until an array is
    too small (the caller grows it and calls again); returns DONE, YIELD, FULL or ROOM.

    Outputs 0 (the whole dataset) and the root's items are written by the caller; each node in
    ``expand_ids`` is expanded, deepest first: a node's children are tallied from its rows (a
    count-only pass, then either one pass of full tallies over the frequent items, or a
    compressed table of the child's rows with infrequent items set to -1, on which the tallies
    are taken). Nodes are expanded in reverse pre-order (a node's children from the last
    attribute to the first), so every immediate subset of an itemset is out before it.

    Unless ``exhaustive``, each distinct set of rows is described once, by its shortest
    description (ties: the first in attribute order): an extension is skipped when it is not a
    generator (an immediate subset has as many rows, or was itself skipped), and when an
    itemset already out has the same rows (the same 128-bit fingerprint, a sum of random
    numbers per distinct row, and the same count) and sorts before it; an itemset out before
    one with the same rows that sorts first is marked dead (removed by the caller). ``gtab``
    (itemsets by ``out_ih``, the sum of their items' random numbers) and ``ctab`` (itemsets by
    fingerprint) are open-addressing tables at most half full.

    A kid's table holds its rows' codes and, per row, where its tallies and fingerprints are
    (``a_ref``): a row of the root's table (>= 0), or -1 - q for row q of ``a_w``/``a_fp``, the
    sums of the rows it merged. In a kid larger than :data:`EAGER`, a row is summed into ``a_w``
    only when another row merges into it (its first row copied, the others added in row order: the
    same sums as copying every row), so a kid whose rows stay distinct costs its codes and 4 bytes
    a row; a smaller kid copies each row's as it comes (read in order, as fast as before).
    """
    n_attr = codes.shape[1]
    t = w.shape[1]
    nf = fp.shape[1]
    d_rows = codes.shape[0]
    root_c = codes.ravel()
    root_w = w.ravel()
    root_f = fp.ravel()
    offsets = np.zeros(n_attr + 1, dtype=np.int64)
    max_nv = 1
    for a in range(n_attr):
        offsets[a + 1] = offsets[a] + n_values[a]
        max_nv = max(max_nv, n_values[a])
    n_items = offsets[n_attr]
    item_attr = np.empty(max(n_items, 1), dtype=np.int64)
    for a in range(n_attr):
        for v in range(n_values[a]):
            item_attr[offsets[a] + v] = a
    acc = np.zeros((max(n_items, 1), t), dtype=np.float64)
    acc_f = np.zeros((max(n_items, 1), max(nf, 1)), dtype=np.int64)
    cnt = np.zeros(max(n_items, 1), dtype=np.float64)
    freq = np.zeros(max(n_items, 1), dtype=np.uint8)
    tmp = np.empty(max(n_attr, 1), dtype=np.int32)
    rw = np.empty(max(t, 1), dtype=np.float64)  # a row's tallies and fingerprints, where they are read
    rf = np.empty(max(nf, 1), dtype=np.int64)
    loff = np.empty(max(n_attr, 1), dtype=np.int64)
    pa = np.empty(n_attr + 1, dtype=np.int64)
    pv = np.empty(n_attr + 1, dtype=np.int64)
    buf_a = np.empty(n_attr + 1, dtype=np.int64)
    buf_v = np.empty(n_attr + 1, dtype=np.int64)
    gmask = gtab.shape[0] - 1

    if st[S_STARTED] == 0:
        nk = expand_ids.shape[0]
        for k in range(nk):
            e = expand_ids[k]
            a_int[3 * k] = out_attr[e]
            a_int[3 * k + 1] = out_val[e]
            a_int[3 * k + 2] = e
        frames[:, 0] = 0
        frames[F_M, 0] = d_rows
        frames[F_NK, 0] = nk
        frames[F_PERM, 0] = 3 * nk
        frames[F_PCOL, 0] = -1
        st[S_DEPTH] = 0
        st[S_TOP_C] = 0
        st[S_TOP_W] = 0
        st[S_TOP_F] = 0
        st[S_TOP_R] = 0
        st[S_TOP_I] = 3 * nk + d_rows + max_nv + 2
        st[S_STARTED] = 1
    depth = st[S_DEPTH]
    top_c = st[S_TOP_C]
    top_w = st[S_TOP_W]
    top_f = st[S_TOP_F]
    top_r = st[S_TOP_R]
    top_i = st[S_TOP_I]
    n_out = st[S_NOUT]
    work = st[S_WORK]
    status = DONE
    while depth >= 0:
        if n_out > cap:
            status = FULL
            break
        if work >= quota:
            status = YIELD
            break
        if frames[F_NEXT, depth] >= frames[F_NK, depth]:
            top_c = frames[F_TOP_C, depth]
            top_w = frames[F_TOP_W, depth]
            top_f = frames[F_TOP_F, depth]
            top_r = frames[F_TOP_R, depth]
            top_i = frames[F_TOP_I, depth]
            depth -= 1
            continue
        # the frame's kids are taken last first: reverse pre-order
        k3 = frames[F_KIDS, depth] + 3 * (frames[F_NK, depth] - 1 - frames[F_NEXT, depth])
        col = np.int64(a_int[k3])
        val = np.int64(a_int[k3 + 1])
        kid_id = np.int64(a_int[k3 + 2])
        if exhaustive == 0 and out_dead[kid_id]:
            frames[F_NEXT, depth] += 1
            continue
        m = frames[F_M, depth]
        a0 = frames[F_A0, depth]
        width = n_attr - a0
        c_off = frames[F_C, depth]
        r_off = frames[F_R, depth]
        p_off = frames[F_PERM, depth]
        s_off = p_off + m
        if depth == 0:  # the root's table is read in place
            tc = root_c
        else:
            tc = a_codes
        if frames[F_PCOL, depth] != col:
            # counting sort of the frame's rows by this column, once per column
            nv = n_values[a0 + col]
            for v in range(nv + 2):
                a_int[s_off + v] = 0
            for r in range(m):
                a_int[s_off + tc[c_off + r * width + col] + 2] += 1
            for v in range(1, nv + 2):
                a_int[s_off + v] += a_int[s_off + v - 1]
            if not (depth == 0 and m > st[S_ROOT_SCAN]):
                for r in range(m):
                    b = tc[c_off + r * width + col] + 1
                    a_int[p_off + a_int[s_off + b]] = r
                    a_int[s_off + b] += 1
                for v in range(nv + 1, 0, -1):
                    a_int[s_off + v] = a_int[s_off + v - 1]
                a_int[s_off] = 0
            # else the starts alone (each code's, already there): the rows are read whole (ROOT_SCAN)
            frames[F_PCOL, depth] = col
            work += m
        lo = np.int64(a_int[s_off + val + 1])
        hi = np.int64(a_int[s_off + val + 2])
        scan = depth == 0 and m > st[S_ROOT_SCAN]  # the kid's rows: those of the whole table holding val
        k_lo = np.int64(0) if scan else lo
        k_hi = m if scan else hi
        cw = width - col - 1
        c0 = col + 1  # the child's first column in the frame's table
        ca0 = a0 + c0  # the child's first attribute
        base = offsets[ca0]
        n_local = n_items - base
        rows = hi - lo
        size = 16
        while size < 2 * rows:
            size *= 2
        # ---- room for everything this kid may need, or the caller grows the arrays first
        room = True
        if n_out + n_local > out_parent.shape[0]:
            st[S_NEED_OUT] = n_out + n_local
            room = False
        if exhaustive == 0 and 2 * (n_out + n_local) + 2 > min(gtab.shape[0], ctab.shape[0]):
            st[S_NEED_TAB] = 2 * (n_out + n_local) + 2
            room = False
        if top_c + rows * cw > a_codes.shape[0]:
            st[S_NEED_C] = top_c + rows * cw
            room = False
        if top_w + rows * t > a_w.shape[0]:
            st[S_NEED_W] = top_w + rows * t
            room = False
        if top_f + rows * nf > a_fp.shape[0]:
            st[S_NEED_F] = top_f + rows * nf
            room = False
        if top_r + rows > a_ref.shape[0]:
            st[S_NEED_R] = top_r + rows
            room = False
        if top_i + 3 * n_local + rows + max_nv + 2 > a_int.shape[0]:
            st[S_NEED_I] = top_i + 3 * n_local + rows + max_nv + 2
            room = False
        if size > ht.shape[0]:
            st[S_NEED_HT] = size
            room = False
        if not room:
            status = ROOM
            break
        frames[F_NEXT, depth] += 1
        child_len = depth + 2  # length of the kid's children
        for c in range(cw):
            loff[c] = offsets[ca0 + c] - base
        n_path = 0
        kid_count = out_w[kid_id, 0]
        if exhaustive == 0:
            n_path = _items_of(kid_id, out_parent, out_attr, out_val, pa, pv)
        # ---- pass A: counts of the kid's children, in the kid's own context
        for i in range(n_local):
            cnt[i] = 0.0
        for ii in range(k_lo, k_hi):
            if scan:
                r = ii
                if tc[c_off + r * width + col] != val:
                    continue
            else:
                r = int(a_int[p_off + ii])
            src = c_off + r * width + c0
            ref = r if depth == 0 else np.int64(a_ref[r_off + r])
            wr = root_w[ref * t] if ref >= 0 else a_w[(-1 - ref) * t]
            for c in range(cw):
                v = tc[src + c]
                if v >= 0:
                    cnt[loff[c] + v] += wr
        work += rows * cw + n_local * (n_path + 1)
        any_freq = False
        expand = False
        for i in range(n_local):
            freq[i] = 0
            if cnt[i] < min_count:
                continue
            a = item_attr[base + i]
            if exhaustive == 0:
                # not a generator: the item holds on every row of the kid, or an immediate
                # subset of the child has as many rows (or was skipped: it is no shortest
                # description, so neither is the child)
                if cnt[i] >= kid_count:
                    continue
                v = base + i - offsets[a]
                h = out_ih[kid_id] + item_hash[base + i]
                ok = True
                for j in range(n_path):
                    hs = h - item_hash[offsets[pa[j]] + pv[j]]
                    slot = _slot(hs, gmask)
                    found = -1
                    while gtab[slot] >= 0:
                        e = gtab[slot]
                        if out_ih[e] == hs and _is_subset_entry(e, pa, pv, n_path, j, a, v, out_parent,
                                                                out_attr, out_val, out_dead):
                            found = e
                            break
                        slot = (slot + 1) & gmask
                    if found < 0 or out_w[found, 0] <= cnt[i]:
                        ok = False
                        break
                if not ok:
                    continue
            freq[i] = 1
            any_freq = True
            if child_len < max_length and a < n_attr - 1:
                expand = True
        if not any_freq:
            continue
        if not expand:
            # ---- a kid none of whose children is expanded: tally the frequent items, emit
            for i in range(n_local):
                if freq[i]:
                    for j in range(t):
                        acc[i, j] = 0.0
                    for j in range(nf):
                        acc_f[i, j] = 0
            for ii in range(k_lo, k_hi):
                if scan:
                    r = ii
                    if tc[c_off + r * width + col] != val:
                        continue
                else:
                    r = int(a_int[p_off + ii])
                src = c_off + r * width + c0
                lr = r if depth == 0 else np.int64(a_ref[r_off + r])  # the row's tallies and fingerprints into rw, rf (inline: a call per row costs)
                if lr >= 0:
                    for j in range(t):
                        rw[j] = root_w[lr * t + j]
                    for j in range(nf):
                        rf[j] = root_f[lr * nf + j]
                else:
                    for j in range(t):
                        rw[j] = a_w[(-1 - lr) * t + j]
                    for j in range(nf):
                        rf[j] = a_fp[(-1 - lr) * nf + j]
                for c in range(cw):
                    v = tc[src + c]
                    if v >= 0:
                        i = loff[c] + v
                        if freq[i]:
                            for j in range(t):
                                acc[i, j] += rw[j]
                            for j in range(nf):
                                acc_f[i, j] += rf[j]
            work += rows * cw
            for i in range(n_local):
                if freq[i]:
                    a = item_attr[base + i]
                    v = base + i - offsets[a]
                    if exhaustive == 0 and not _admit(n_out, kid_id, a, v, base + i, acc, acc_f, i, pa, pv,
                                                      n_path, item_hash, out_parent, out_attr, out_val,
                                                      out_w, out_fp, out_ih, out_dead, gtab, ctab, buf_a, buf_v):
                        continue
                    _emit(n_out, out_parent, out_attr, out_val, out_w, out_fp, kid_id, a, v, acc, acc_f, i, t, nf)
                    n_out += 1
            continue
        # ---- pass B: the kid's table, later columns, infrequent items -1, merged
        nc = top_c
        nr = top_r
        q0 = top_w // t  # the kid's first row of sums (those below are its ancestors')
        nq = q0
        eager = rows * (t + nf) <= st[S_EAGER]
        mask = size - 1
        for s_ in range(size):  # slots past ``size`` are never read: the table is as small as the kid
            ht[s_] = -1
        kk = 0
        for ii in range(k_lo, k_hi):
            if scan:
                r = ii
                if tc[c_off + r * width + col] != val:
                    continue
            else:
                r = int(a_int[p_off + ii])
            src = c_off + r * width + c0
            ref = r if depth == 0 else np.int64(a_ref[r_off + r])
            h = np.uint64(1469598103934665603)
            for c in range(cw):
                v = tc[src + c]
                if v >= 0 and freq[loff[c] + v] == 0:
                    v = -1
                tmp[c] = v
                h = (h ^ np.uint64(v + 2)) * np.uint64(1099511628211)
            slot = np.int64(h & np.uint64(mask))
            while True:
                if ht[slot] < 0:
                    ht[slot] = kk
                    dst = nc + kk * cw
                    for c in range(cw):
                        a_codes[dst + c] = tmp[c]
                    if eager:  # its row of sums now, the row's tallies copied
                        lr = ref  # the row's tallies and fingerprints into rw, rf (inline: a call per row costs)
                        if lr >= 0:
                            for j in range(t):
                                rw[j] = root_w[lr * t + j]
                            for j in range(nf):
                                rf[j] = root_f[lr * nf + j]
                        else:
                            for j in range(t):
                                rw[j] = a_w[(-1 - lr) * t + j]
                            for j in range(nf):
                                rf[j] = a_fp[(-1 - lr) * nf + j]
                        for j in range(t):
                            a_w[nq * t + j] = rw[j]
                        for j in range(nf):
                            a_fp[nq * nf + j] = rf[j]
                        a_ref[nr + kk] = -1 - nq
                        nq += 1
                    else:
                        a_ref[nr + kk] = ref
                    kk += 1
                    break
                g = ht[slot]
                same = True
                dst = nc + g * cw
                for c in range(cw):
                    if a_codes[dst + c] != tmp[c]:
                        same = False
                        break
                if same:
                    gref = np.int64(a_ref[nr + g])
                    if gref >= 0 or -1 - gref < q0:  # its first row merged into: a row of sums, that row's copy
                        lr = gref  # the row's tallies and fingerprints into rw, rf (inline: a call per row costs)
                        if lr >= 0:
                            for j in range(t):
                                rw[j] = root_w[lr * t + j]
                            for j in range(nf):
                                rf[j] = root_f[lr * nf + j]
                        else:
                            for j in range(t):
                                rw[j] = a_w[(-1 - lr) * t + j]
                            for j in range(nf):
                                rf[j] = a_fp[(-1 - lr) * nf + j]
                        for j in range(t):
                            a_w[nq * t + j] = rw[j]
                        for j in range(nf):
                            a_fp[nq * nf + j] = rf[j]
                        a_ref[nr + g] = -1 - nq
                        gref = -1 - nq
                        nq += 1
                    dw = (-1 - gref) * t
                    df = (-1 - gref) * nf
                    lr = ref  # the row's tallies and fingerprints into rw, rf (inline: a call per row costs)
                    if lr >= 0:
                        for j in range(t):
                            rw[j] = root_w[lr * t + j]
                        for j in range(nf):
                            rf[j] = root_f[lr * nf + j]
                    else:
                        for j in range(t):
                            rw[j] = a_w[(-1 - lr) * t + j]
                        for j in range(nf):
                            rf[j] = a_fp[(-1 - lr) * nf + j]
                    for j in range(t):
                        a_w[dw + j] += rw[j]
                    for j in range(nf):
                        a_fp[df + j] += rf[j]
                    break
                slot = (slot + 1) & mask
        work += rows * cw
        # ---- pass C: full tallies on the merged table, emit, list the children to expand
        for i in range(n_local):
            if freq[i]:
                for j in range(t):
                    acc[i, j] = 0.0
                for j in range(nf):
                    acc_f[i, j] = 0
        for r in range(kk):
            src = nc + r * cw
            lr = np.int64(a_ref[nr + r])  # the row's tallies and fingerprints into rw, rf (inline: a call per row costs)
            if lr >= 0:
                for j in range(t):
                    rw[j] = root_w[lr * t + j]
                for j in range(nf):
                    rf[j] = root_f[lr * nf + j]
            else:
                for j in range(t):
                    rw[j] = a_w[(-1 - lr) * t + j]
                for j in range(nf):
                    rf[j] = a_fp[(-1 - lr) * nf + j]
            for c in range(cw):
                v = a_codes[src + c]
                if v >= 0:
                    i = loff[c] + v
                    for j in range(t):
                        acc[i, j] += rw[j]
                    for j in range(nf):
                        acc_f[i, j] += rf[j]
        work += kk * cw
        kids_off = top_i
        nk = 0
        for i in range(n_local):
            if freq[i]:
                a = item_attr[base + i]
                v = base + i - offsets[a]
                if exhaustive == 0 and not _admit(n_out, kid_id, a, v, base + i, acc, acc_f, i, pa, pv, n_path,
                                                  item_hash, out_parent, out_attr, out_val, out_w, out_fp, out_ih,
                                                  out_dead, gtab, ctab, buf_a, buf_v):
                    continue
                _emit(n_out, out_parent, out_attr, out_val, out_w, out_fp, kid_id, a, v, acc, acc_f, i, t, nf)
                if child_len < max_length and a < n_attr - 1:
                    a_int[kids_off + 3 * nk] = a - ca0
                    a_int[kids_off + 3 * nk + 1] = v
                    a_int[kids_off + 3 * nk + 2] = n_out
                    nk += 1
                n_out += 1
        # push the kid's frame
        depth += 1
        frames[F_TOP_C, depth] = top_c
        frames[F_TOP_W, depth] = top_w
        frames[F_TOP_F, depth] = top_f
        frames[F_TOP_R, depth] = top_r
        frames[F_TOP_I, depth] = top_i
        frames[F_C, depth] = nc
        frames[F_R, depth] = nr
        frames[F_M, depth] = kk
        frames[F_A0, depth] = ca0
        frames[F_KIDS, depth] = kids_off
        frames[F_NK, depth] = nk
        frames[F_NEXT, depth] = 0
        frames[F_PERM, depth] = kids_off + 3 * nk
        frames[F_PCOL, depth] = -1
        top_c = nc + kk * cw
        top_r = nr + kk
        top_w = nq * t
        top_f = nq * nf
        top_i = kids_off + 3 * nk + kk + max_nv + 2
    st[S_DEPTH] = depth
    st[S_TOP_C] = top_c
    st[S_TOP_W] = top_w
    st[S_TOP_F] = top_f
    st[S_TOP_R] = top_r
    st[S_TOP_I] = top_i
    st[S_NOUT] = n_out
    st[S_WORK] = work
    return status


def _codes8(k: Kernel, *positions: int) -> Kernel:
    """Kernel ``k`` compiled again for 8-bit codes (every attribute of at most 127 items) in the arguments
    at ``positions``: its name with an 8; the same code, a quarter of the codes' memory."""
    assert k.signature is not None
    sig = list(k.signature)
    for j in positions:
        sig[j] = ArgType("i1", sig[j].dims)
    return k.retyped(k.py_func.__name__ + "8", *sig)


#: :func:`mine_step` on 8-bit codes: the root's table and the kids' tables (``a_codes``)
mine_step8 = _codes8(mine_step, 0, 13)


@kernel
def _admit(n_out, kid_id, a, v, item, acc, acc_f, i, pa, pv, n_path, item_hash, out_parent, out_attr, out_val,
           out_w, out_fp, out_ih, out_dead, gtab, ctab, buf_a, buf_v):
    """Whether the child kid∪{(a, v)} is the first description of its rows seen so far (an
    itemset with the same rows that sorts first was not out before it); registers it in the
    tables as output n_out, and marks an earlier description of the same rows dead."""
    gmask = gtab.shape[0] - 1
    cmask = ctab.shape[0] - 1
    slot = _slot(acc_f[i, 0], cmask)
    while ctab[slot] >= 0:
        e = ctab[slot]
        if out_fp[e, 0] == acc_f[i, 0] and out_fp[e, 1] == acc_f[i, 1] and out_w[e, 0] == acc[i, 0]:
            if _smaller(e, pa, pv, n_path, a, v, out_parent, out_attr, out_val, buf_a, buf_v):
                return False
            out_dead[e] = True
            break
        slot = (slot + 1) & cmask
    ctab[slot] = n_out
    h = out_ih[kid_id] + item_hash[item]
    out_ih[n_out] = h
    out_dead[n_out] = False
    g = _slot(h, gmask)
    while gtab[g] >= 0:
        g = (g + 1) & gmask
    gtab[g] = n_out
    return True


@kernel
def _emit(n_out, out_parent, out_attr, out_val, out_w, out_fp, parent, a, v, acc, acc_f, i, t, nf):
    out_parent[n_out] = parent
    out_attr[n_out] = a
    out_val[n_out] = v
    for j in range(t):
        out_w[n_out, j] = acc[i, j]
    for j in range(nf):
        out_fp[n_out, j] = acc_f[i, j]


@kernel(i8[::1], i8[::1], i8[:, ::1], i4[::1], i4[::1], b1[::1], i8[::1], i8[::1], i8)
def fill_tables(out_ih, out_parent, out_fp, out_attr, out_val, out_dead, gtab, ctab, n_out):
    """(Re)build the itemset and fingerprint tables of outputs 1..n_out-1 (the newest of a
    fingerprint owns its slot, as when they were admitted one by one)."""
    gtab[:] = -1
    ctab[:] = -1
    gmask = gtab.shape[0] - 1
    cmask = ctab.shape[0] - 1
    for e in range(1, n_out):
        g = _slot(out_ih[e], gmask)
        while gtab[g] >= 0:
            g = (g + 1) & gmask
        gtab[g] = e
        if out_dead[e]:
            continue
        c = _slot(out_fp[e, 0], cmask)
        while ctab[c] >= 0:
            f = ctab[c]
            if out_fp[f, 0] == out_fp[e, 0] and out_fp[f, 1] == out_fp[e, 1]:
                break
            c = (c + 1) & cmask
        ctab[c] = e
    return 0


@kernel(i4[:, ::1], i8[:, ::1], i8, i8[::1])
def root_fingerprints(codes, fp, n_items, offsets):
    """Per item, the wrapping sum of the fingerprints of the rows holding it."""
    nf = fp.shape[1]
    acc = np.zeros((max(n_items, 1), max(nf, 1)), dtype=np.int64)
    for r in range(codes.shape[0]):
        for c in range(codes.shape[1]):
            v = codes[r, c]
            if v >= 0:
                for j in range(nf):
                    acc[offsets[c] + v, j] += fp[r, j]
    return acc


@kernel(i8[::1], i4[::1], i4[::1], i8)
def expand_codes(parent, attr, val, n_attr):
    """Each itemset's item code per attribute (-1: none), from its parent's and its last item."""
    n = parent.shape[0]
    out = np.full((n, n_attr), -1, dtype=np.int32)
    for i in range(1, n):
        p = parent[i]
        for a in range(n_attr):
            out[i, a] = out[p, a]
        out[i, attr[i]] = val[i]
    return out


@kernel(i4[:, ::1], f8[:, ::1], i8, i8[::1])
def root_tallies(codes, w, n_items, offsets):
    """Tallies of every item over the whole (compressed) table."""
    t = w.shape[1]
    acc = np.zeros((max(n_items, 1), t), dtype=np.float64)
    for r in range(codes.shape[0]):
        for c in range(codes.shape[1]):
            v = codes[r, c]
            if v >= 0:
                i = offsets[c] + v
                for j in range(t):
                    acc[i, j] += w[r, j]
    return acc



#: :func:`root_fingerprints` and :func:`root_tallies` on 8-bit codes
root_fingerprints8 = _codes8(root_fingerprints, 0)
root_tallies8 = _codes8(root_tallies, 0)
