#!/usr/bin/env python3
"""The "many worlds" attack on fedstat's signed sparse secure aggregation (SecAgg+), modelled.

What this is
  An exact model of what a lying server can do to one victim device in a signed sparse session
  (protocol 5, h-proto): devices on a ring, roster N(u) = the k+1 devices within k/2 of u; the
  server picks every honest device's U2_u and U3_u, forwards whatever consistency signatures it
  likes, and controls c corrupt devices. It asks: can the server unmask the victim's input? Three
  independent tools answer it, and they agree:

    ilp        a 0/1 integer program (pulp + CBC) of the device rules, minimising the number of
               corrupt devices the attack needs (exact for the ring it is given: optimality
               proved by CBC).  Rules to test: --rule current|A|B|C|Cb|D2|D8|unanimous.
    construct  the explicit two-world attack for any (k, t) with c = max(0, 2t-k-2) corrupt
               neighbours, checked device by device by an independent simulator of the rules
               (`check`), under each rule.
    bound      the counting bounds (minimum corrupt neighbours of the victim) and how likely a
               victim with that many corrupt neighbours is, per the hypergeometric model of
               sdk/secagg/graph_parameters.h (gamma = 5 %).

The device rules (the model; positions relative to the victim 0)
  honest u:  u in U2_u, U3_u subset of U2_u subset of N(u), |U2_u| >= t, |U3_u| >= t.
  counting:  u counts signer v != u iff v in U3_u, the server forwarded v's message, and (v
             honest) v's U3 agrees with u's on every x in N(u) & N(v) — or v is corrupt (it signs
             any view, any number of them). u reveals iff 1 + #counted >= t.
  reveal:    a revealing honest u gives, for each x in U2_u - {u}: a share of b_x if x in U3_u,
             else of s_x; and its own b_u share. A corrupt device gives every share it holds.
  learning:  the server unmasks the victim if it holds >= t shares of b_0 and, for every
             x in U2_0 - {0}: >= t shares of s_x (or x corrupt), or >= t shares of s_0.
  rules:     current  as above (h-proto today).
             A        also sign U2 and require agreement on U2 over N(u) & N(v).
             B        one global labelling per "world" (Merkle root): u counts only signers of its
                      own root; views are restrictions of the world's labelling (--worlds m).
             C        u reveals s_x only with t agreeing signers (itself included) in N(u) & N(x).
             Cb       C, and the same for b_x.
             D2       u reveals b_v (v != u) only if it counted v's own consistency signature.
             D8       u reveals b_v (v != u) only if v's signed U2 (signed in round 2, with its
                      masked input) names u — i.e. v masked with u.
             unanimous  u reveals only when every member of U3_u signed an agreeing view.
             E        a device never reveals its own share of b_u.
             F        u reveals only after t signers OTHER than itself (count >= t, not t-1).
             Rules combine with '+': D8+F is the recommendation (see the findings note).

Results (this script; /work/notes/worlds-findings.md): minimum corrupt neighbours of the victim
  current, A, B            2t-k-2   (k=6,t=4: 0 — honest devices only)
  D2, D8, unanimous, E     2t-k-1   (= the plain split with the victim's own b-share)
  D8+F (D2+F, unan.+F)     2t-k     (= what graph_parameters' 2t > t1 + k protects)
  C, Cb                    break liveness for t > k/2 + 1 (no reveal about peers > k+1-t away)
Proof sketch of the lower bounds in the note; `construct` shows they are attained at every (k, t).

Run (each is seconds to minutes on one core; CBC single-threaded):
  python3 scripts/secagg_many_worlds.py bound
  python3 scripts/secagg_many_worlds.py construct
  python3 scripts/secagg_many_worlds.py ilp --k 6 --t 4 --rule current
  python3 scripts/secagg_many_worlds.py ilp --k 8 --t 6 --rule D8 --max-corrupt 2   # infeasible
  python3 scripts/secagg_many_worlds.py table --params 6/4,8/6   # the ILP table of the note
Needs: numpy-free; pulp with CBC for `ilp` (Debian: python3-pulp coinor-cbc).
"""
import argparse
import itertools
import math
import sys
import time

RULES = ["current", "A", "B", "C", "Cb", "D2", "D8", "unanimous", "E", "F", "E+F", "D8+E",
         "D8+F", "D8+E+F"]


def ring(n):
    return range(n)


def nbhd(u, n, k):
    h = k // 2
    return [(u + j) % n for j in range(-h, h + 1)]


def dist(a, b, n):
    d = abs(a - b) % n
    return min(d, n - d)


# ------------------------------------------------------------------------------------------------
# The ILP
# ------------------------------------------------------------------------------------------------
def solve_ilp(k, t, rule, n=None, max_corrupt=None, corrupt_radius=None, worlds=2, time_limit=600,
              verbose=False):
    """Minimum number of corrupt devices for the server to unmask device 0, under `rule`.

    Returns (status, min_corrupt or None, solution dict or None, seconds)."""
    import pulp
    R = set(rule.split("+"))
    n = n or 3 * k + 3
    h = k // 2
    N = {u: nbhd(u, n, k) for u in ring(n)}
    Nset = {u: set(N[u]) for u in ring(n)}
    radius = k if corrupt_radius is None else corrupt_radius
    cand = [u for u in ring(n) if u != 0 and dist(u, 0, n) <= radius]
    P = pulp.LpProblem("many_worlds", pulp.LpMinimize)
    B = pulp.LpBinary
    cor = {u: (pulp.LpVariable(f"cor_{u}", cat=B) if u in cand else 0) for u in ring(n)}
    a2, a3 = {}, {}
    for u in ring(n):
        for x in N[u]:
            if x == u:
                a2[u, x] = a3[u, x] = 1
            else:
                a2[u, x] = pulp.LpVariable(f"a2_{u}_{x}", cat=B)
                a3[u, x] = pulp.LpVariable(f"a3_{u}_{x}", cat=B)
                P += a3[u, x] <= a2[u, x]
    rv = {u: pulp.LpVariable(f"rv_{u}", cat=B) for u in ring(n)}
    f = {(u, v): pulp.LpVariable(f"f_{u}_{v}", cat=B) for u in ring(n) for v in N[u] if v != u}
    P += pulp.lpSum(cor[u] for u in cand)  # objective
    if max_corrupt is not None:
        P += pulp.lpSum(cor[u] for u in cand) <= max_corrupt
    # World labelling for rule B.
    if "B" in R:
        L = {(m, x): pulp.LpVariable(f"L_{m}_{x}", cat=B) for m in range(worlds) for x in ring(n)}
        z = {(u, m): pulp.LpVariable(f"z_{u}_{m}", cat=B) for u in ring(n) for m in range(worlds)}
        for u in ring(n):
            P += pulp.lpSum(z[u, m] for m in range(worlds)) == 1
            for m in range(worlds):
                P += L[m, u] >= z[u, m] - cor[u] if not isinstance(cor[u], int) else L[m, u] >= z[u, m]
                for x in N[u]:
                    if x == u:
                        continue
                    # honest u in world m: its U3 bit for x equals the world's label
                    P += a3[u, x] - L[m, x] <= 1 - z[u, m] + cor[u]
                    P += L[m, x] - a3[u, x] <= 1 - z[u, m] + cor[u]
    for u in ring(n):
        hon = 1 - cor[u]
        P += pulp.lpSum(a2[u, x] for x in N[u]) >= t * hon
        P += pulp.lpSum(a3[u, x] for x in N[u]) >= t * hon
        P += rv[u] <= hon
        need = t if "F" in R else t - 1  # rule F: t signers besides u itself
        P += pulp.lpSum(f[u, v] for v in N[u] if v != u) >= need * rv[u]
        for v in N[u]:
            if v == u:
                continue
            P += f[u, v] <= a3[u, v]
            common = [x for x in N[u] if x in Nset[v]]
            for x in common:
                P += f[u, v] <= 1 - a3[u, x] + a3[v, x] + cor[v]
                P += f[u, v] <= 1 + a3[u, x] - a3[v, x] + cor[v]
                if "A" in R:
                    P += f[u, v] <= 1 - a2[u, x] + a2[v, x] + cor[v]
                    P += f[u, v] <= 1 + a2[u, x] - a2[v, x] + cor[v]
            if "B" in R:
                for m in range(worlds):  # same world, unless v is corrupt (signs every root)
                    P += f[u, v] <= 1 - z[u, m] + z[v, m] + cor[v]
            if "unanimous" in R:
                # a U3 member that is not counted blocks u
                P += rv[u] + a3[u, v] - 1 <= f[u, v]
    # Shares reaching the server.
    rb = {}   # rb[w, v]: honest w reveals its b_v share
    rs = {}   # rs[w, v]: honest w reveals its s_v share
    for w in ring(n):
        for x in N[w]:
            if x == w:
                continue
            rb[w, x] = pulp.LpVariable(f"rb_{w}_{x}", cat=B)
            rs[w, x] = pulp.LpVariable(f"rs_{w}_{x}", cat=B)
            for var in (rb[w, x], rs[w, x]):
                P += var <= rv[w]
                P += var <= 1 - cor[w]
            P += rb[w, x] <= a3[w, x]
            P += rs[w, x] <= a2[w, x]
            P += rs[w, x] <= 1 - a3[w, x]
            if "D2" in R:
                P += rb[w, x] <= f[w, x]
            if "D8" in R:
                P += rb[w, x] <= a2[x, w]
            if ("C" in R or "Cb" in R):
                common = [v for v in N[w] if v in Nset[x] and v != w]
                P += pulp.lpSum(f[w, v] for v in common) >= (t - 1) * rs[w, x]
                if "Cb" in R:
                    P += pulp.lpSum(f[w, v] for v in common) >= (t - 1) * rb[w, x]
    # The victim's b_0: its own share (if it reveals), honest holders', corrupt holders'.
    own = 0 if "E" in R else rv[0]  # rule E: a device never reveals its own share of b_u
    P += own + pulp.lpSum(rb[w, 0] + cor[w] for w in N[0] if w != 0) >= t
    S = {x: pulp.LpVariable(f"S_{x}", cat=B) for x in N[0]}  # >= t shares of s_x reach the server
    for x in N[0]:
        P += pulp.lpSum(rs[w, x] + cor[w] for w in N[x] if w != x) >= t * S[x]
    for x in N[0]:
        if x == 0:
            continue
        P += a2[0, x] <= S[x] + cor[x] + S[0]
    solver = pulp.COIN_CMD(msg=verbose, timeLimit=time_limit, threads=1) if hasattr(pulp, "COIN_CMD") \
        else pulp.PULP_CBC_CMD(msg=verbose, timeLimit=time_limit)
    t0 = time.time()
    P.solve(solver)
    secs = time.time() - t0
    status = pulp.LpStatus[P.status]
    if status == "Optimal" and getattr(P, "sol_status", 1) != 1:  # stopped on time: feasible only
        status = "feasible, not proved minimal (time limit)"
    if P.status != 1:
        return status, None, None, secs
    val = lambda e: int(round(pulp.value(e))) if not isinstance(e, int) else e
    sol = {
        "n": n,
        "corrupt": sorted(u for u in cand if val(cor[u])),
        "U2": {u: sorted(x for x in N[u] if val(a2[u, x])) for u in ring(n)},
        "U3": {u: sorted(x for x in N[u] if val(a3[u, x])) for u in ring(n)},
        "reveals": sorted(u for u in ring(n) if val(rv[u])),
        "counted": {u: sorted(v for v in N[u] if v != u and val(f[u, v])) for u in ring(n)},
    }
    return status, len(sol["corrupt"]), sol, secs


# ------------------------------------------------------------------------------------------------
# An independent checker of one attack (views, U2, forwarding, corrupt set) under a rule
# ------------------------------------------------------------------------------------------------
def check(k, t, n, corrupt, U2, U3, rule, world=None, verbose=False):
    """Simulate the devices' rules for the server's choices; return (unmasked?, details).

    The server forwards to u every signature u would count (the best it can do: a message that
    disagrees aborts u, so it is never forwarded). world[u]: the root u signs (rule B)."""
    R = set(rule.split("+"))
    N = {u: nbhd(u, n, k) for u in ring(n)}
    Ns = {u: set(N[u]) for u in ring(n)}
    honest = [u for u in ring(n) if u not in corrupt]
    for u in honest:  # the device-side validity checks of on_roster
        assert u in U2[u] and u in U3[u], u
        assert set(U3[u]) <= set(U2[u]) <= Ns[u], u
        assert len(U2[u]) >= t and len(U3[u]) >= t, (u, U2[u], U3[u])
    s2 = {u: set(U2[u]) for u in honest}
    s3 = {u: set(U3[u]) for u in honest}

    def agrees(u, v):
        if v in corrupt:
            return True
        common = Ns[u] & Ns[v]
        if any((x in s3[u]) != (x in s3[v]) for x in common):
            return False
        if "A" in R and any((x in s2[u]) != (x in s2[v]) for x in common):
            return False
        if "B" in R and world[u] != world[v]:
            return False
        return True

    counted = {u: [v for v in N[u] if v != u and v in s3[u] and agrees(u, v)] for u in honest}
    reveals = set()
    for u in honest:
        ok = len(counted[u]) >= (t if "F" in R else t - 1)
        if "unanimous" in R:
            ok = ok and all(v in counted[u] for v in s3[u] if v != u)
        if ok:
            reveals.add(u)
    bshares = {x: set() for x in ring(n)}
    sshares = {x: set() for x in ring(n)}
    for u in reveals:
        if "E" not in R:
            bshares[u].add(u)
        for x in s2[u] - {u}:
            if x in s3[u]:
                if "D2" in R and x not in counted[u]:
                    continue  # x's own agreeing signature was not counted
                if "D8" in R and x not in corrupt and u not in s2[x]:
                    continue  # x's signed U2 does not name u: x did not mask with u
                if "Cb" in R and 1 + len([v for v in counted[u] if v in Ns[x]]) < t:
                    continue
                bshares[x].add(u)
            else:
                if ("C" in R or "Cb" in R):
                    sup = [v for v in counted[u] if v in Ns[x]]
                    if 1 + len(sup) < t:
                        continue
                sshares[x].add(u)
    for c in corrupt:
        for x in N[c]:
            bshares[x].add(c)
            if x != c:
                sshares[x].add(c)
    b0 = len(bshares[0])
    s_known = {x: (x in corrupt) or len(sshares[x]) >= t for x in ring(n)}
    missing = [x for x in s2[0] - {0} if not s_known[x] and not s_known[0]]
    unmasked = b0 >= t and not missing
    return unmasked, {"b0": b0, "s0": len(sshares[0]), "s": {x: len(sshares[x]) for x in sorted(s2[0] - {0})},
                      "missing": missing, "reveals": len(reveals)}


# ------------------------------------------------------------------------------------------------
# The explicit two-world attack
# ------------------------------------------------------------------------------------------------
def two_world_attack(k, t, n=None, corrupt_count=None):
    """World A: the victim 0 and the honest part D of H (U2_0 = {0} + H, |H| = t-1) see H alive.
    World B: every other device sees D dead (0 alive) and masks with its whole roster.
    The corrupt devices C = H - D (|C| = 2t-k-2) sit in the victim's roster; D holds -k/2, +k/2.
    Returns (n, corrupt, U2, U3, world)."""
    h = k // 2
    n = n or 3 * k + 3
    c = max(0, 2 * t - k - 2) if corrupt_count is None else corrupt_count
    d = (t - 1) - c  # |D|
    assert d >= 2, "needs |D| >= 2"
    # D: -h, +h, then alternate inward: -(h-1), +(h-1), ...; C: the next ones inward.
    order = [-h, h]
    for j in range(h - 1, 0, -1):
        order += [-j, j]
    D = [x % n for x in order[:d]]
    C = [x % n for x in order[d:d + c]]
    H = set(D) | set(C)
    N = {u: nbhd(u, n, k) for u in ring(n)}
    U2, U3, world = {}, {}, {}
    for u in ring(n):
        if u in C:
            continue
        if u == 0:
            U2[u] = U3[u] = sorted({0} | H)
            world[u] = "A"
        elif u in D:
            # restriction of world A's labelling: on the victim's roster only {0} + H alive
            U2[u] = U3[u] = sorted(x for x in N[u] if x not in N[0] or x in H or x == 0)
            world[u] = "A"
        else:
            U2[u] = sorted(N[u])
            U3[u] = sorted(x for x in N[u] if x not in D)
            world[u] = "B"
    return n, set(C), U2, U3, world


def plain_split_attack(k, t, corrupt_count, n=None):
    """The plain split (no lie about U2): U2 = rosters for all; the s-side W_s (|W_s| = t - c, at
    the far ends of the victim's roster) sees the victim dead, everyone else sees all alive; the c
    corrupt devices (nearest the victim) sign both views and reveal both shares. Needs no many
    worlds and beats every rule here once c is large enough: c = 2t-k-1 (2t-k under F)."""
    h = k // 2
    n = n or 3 * k + 3
    c = corrupt_count
    order = []
    for j in range(1, h + 1):
        order += [j, -j]
    C = [x % n for x in order[:c]]
    far = []
    for j in range(h, 0, -1):
        far += [j, -j]
    Ws = [x % n for x in far if x % n not in C][:max(0, t - c)]
    N = {u: nbhd(u, n, k) for u in ring(n)}
    U2, U3 = {}, {}
    for u in ring(n):
        if u in C:
            continue
        U2[u] = sorted(N[u])
        U3[u] = sorted(x for x in N[u] if not (u in Ws and x == 0))
    return n, set(C), U2, U3


# ------------------------------------------------------------------------------------------------
# Probability that some honest device has >= c corrupt neighbours (hypergeometric, union bound)
# ------------------------------------------------------------------------------------------------
def hyper_tail(N, K, draws, a):
    """Pr[A >= a], A ~ Hypergeometric(population N, K successes, `draws` draws)."""
    tot = 0.0
    for x in range(a, min(K, draws) + 1):
        tot += math.comb(K, x) * math.comb(N - K, draws - x)
    return tot / math.comb(N, draws)


PARAMS = [(6, 4, None), (8, 6, None), (16, 11, 100), (32, 22, 200), (62, 43, 1000)]


def t1_of(n, k, gamma=0.05, sigma=40):
    """graph_parameters.cpp's t1 = min{a : Pr[A > a] < 2^-(sigma+1)/n}, A ~ Hyp(n, floor(gamma n), k)."""
    K = int(gamma * n)
    q = 2.0 ** -(sigma + 1) / n
    for a in range(0, k + 1):
        if hyper_tail(n, K, k, a + 1) < q:
            return a
    return k


def lg(p):
    return "0" if p == 0 else f"{p:.2g} (2^{math.log2(p):.0f})"


def cmd_bound(args):
    print("| k | t | n | t1 | min c: many worlds (2t-k-2) | min c: plain split / D8 (2t-k-1) |"
          " P[some device has >= 2t-k-2 corrupt nbrs] | P[... >= 2t-k-1] | P[... >= 2t-k] |")
    print("|---|---|---|---|---|---|---|---|---|")
    for k, t, n in PARAMS:
        cw, cs = max(0, 2 * t - k - 2), 2 * t - k - 1
        for nn in ([n] if n else [100, 1000, 10000]):
            K = int(0.05 * nn)
            p = [min(1.0, nn * hyper_tail(nn, K, k, c)) for c in (cw, cs, cs + 1)]
            print(f"| {k} | {t} | {nn} | {t1_of(nn, k)} | {cw} | {cs} | {lg(p[0])} | {lg(p[1])} |"
                  f" {lg(p[2])} |")


def cmd_construct(args):
    print("Two-world attack, c = max(0, 2t-k-2) corrupt neighbours of the victim:")
    print("| k | t | n | corrupt | rule | unmasked | b_0 shares | min s_x shares over U2_0 |")
    print("|---|---|---|---|---|---|---|---|")
    for k, t, _ in PARAMS:
        n, C, U2, U3, world = two_world_attack(k, t)
        for rule in RULES:
            ok, det = check(k, t, n, C, U2, U3, rule, world)
            print(f"| {k} | {t} | {n} | {len(C)} | {rule} | {'YES' if ok else 'no'} | {det['b0']} |"
                  f" {min(det['s'].values()) if det['s'] else '-'} |")
    print()
    print("Plain split (no lie about U2), c corrupt neighbours of the victim:")
    print("| k | t | corrupt | rule | unmasked | b_0 shares | s_0 shares |")
    print("|---|---|---|---|---|---|---|")
    for k, t, _ in PARAMS:
        for c in (2 * t - k - 1, 2 * t - k):
            n, C, U2, U3 = plain_split_attack(k, t, c)
            for rule in ["current", "D8", "D8+F"]:
                ok, det = check(k, t, n, C, U2, U3, rule)
                print(f"| {k} | {t} | {c} | {rule} | {'YES' if ok else 'no'} | {det['b0']} |"
                      f" {det['s0']} |")


def cmd_liveness(args):
    """Honest server, no attack: does the round complete under each rule? No dropout, and one
    device (0) dropped after masking (U2 = rosters, U3 = rosters minus 0)."""
    print("| k | t | rule | no dropout: sum recovered | one dropout: its s recovered |")
    print("|---|---|---|---|---|")
    for k, t, _ in PARAMS:
        n = 3 * k + 3
        N = {u: nbhd(u, n, k) for u in ring(n)}
        for rule in ["current", "C", "Cb", "D8", "D8+F"]:
            R = set(rule.split("+"))
            res = []
            for dropped in (set(), {0}):
                ok = True
                for x in ring(n):
                    holders = 0
                    for u in N[x]:
                        if u in dropped:
                            continue
                        alive = [v for v in N[u] if v not in dropped and v != u]
                        if len(alive) < (t if "F" in R else t - 1):
                            continue  # u does not reveal
                        if u == x:
                            holders += 1  # its own b-share (x alive)
                            continue
                        # C gates s_x (x dropped), Cb gates b_x too: t agreeing signers,
                        # u included, among N(u) & N(x)
                        gated = ("C" in R and x in dropped) or "Cb" in R
                        common = [v for v in alive if v in N[x]]
                        if gated and 1 + len(common) < t:
                            continue
                        holders += 1
                    if holders < t:
                        ok = False
                res.append("yes" if ok else "NO")
            print(f"| {k} | {t} | {rule} | {res[0]} | {res[1]} |")


def show(sol, k):
    n = sol["n"]
    rel = lambda x: x if x <= n // 2 else x - n
    out = [f"corrupt: {[rel(x) for x in sol['corrupt']]}", f"U2_0: {[rel(x) for x in sol['U2'][0]]}"]
    for u in sorted(ring(n), key=rel):
        if abs(rel(u)) > 2 * k or u in sol["corrupt"]:
            continue
        drop3 = [rel(x) for x in nbhd(u, n, k) if x not in sol["U3"][u]]
        drop2 = [rel(x) for x in nbhd(u, n, k) if x not in sol["U2"][u]]
        if drop2 or drop3 or u in sol["reveals"]:
            out.append(f"  {rel(u):+d}: U2 drops {drop2} U3 drops {drop3}"
                       f" reveals={u in sol['reveals']} counts {[rel(v) for v in sol['counted'][u]]}")
    return "\n".join(out)


def cmd_ilp(args):
    st, c, sol, secs = solve_ilp(args.k, args.t, args.rule, n=args.n, max_corrupt=args.max_corrupt,
                                 corrupt_radius=args.radius, worlds=args.worlds,
                                 time_limit=args.time_limit, verbose=args.verbose)
    print(f"k={args.k} t={args.t} rule={args.rule} max_corrupt={args.max_corrupt}: {st}"
          f" min corrupt={c} ({secs:.1f} s)")
    if sol and args.show:
        print(show(sol, args.k))
    if sol:  # cross-check the ILP's attack with the independent simulator
        world = None
        if "B" in args.rule.split("+"):
            return
        ok, det = check(args.k, args.t, sol["n"], set(sol["corrupt"]), sol["U2"], sol["U3"],
                        args.rule)
        print(f"  simulator: unmasked={ok} {det}")


def cmd_table(args):
    print("| k | t | rule | CBC status | min corrupt (within k of the victim) | time |")
    print("|---|---|---|---|---|---|")
    for kt in args.params.split(","):
        k, t = map(int, kt.split("/"))
        for rule in args.rules.split(","):
            st, c, sol, secs = solve_ilp(k, t, rule, time_limit=args.time_limit,
                                         worlds=args.worlds)
            if sol and "B" not in rule:
                ok, _ = check(k, t, sol["n"], set(sol["corrupt"]), sol["U2"], sol["U3"], rule)
                st += ", simulator agrees" if ok else ", SIMULATOR DISAGREES"
            print(f"| {k} | {t} | {rule} | {st} | {c} | {secs:.0f} s |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("bound")
    sub.add_parser("construct")
    sub.add_parser("liveness")
    p = sub.add_parser("ilp")
    p.add_argument("--k", type=int, required=True)
    p.add_argument("--t", type=int, required=True)
    p.add_argument("--rule", default="current", help="+-joined: " + ",".join(RULES) + ",E")
    p.add_argument("--n", type=int)
    p.add_argument("--max-corrupt", type=int)
    p.add_argument("--radius", type=int, help="corrupt devices within this ring distance (default k)")
    p.add_argument("--worlds", type=int, default=2)
    p.add_argument("--time-limit", type=int, default=600)
    p.add_argument("--show", action="store_true")
    p.add_argument("--verbose", action="store_true")
    p = sub.add_parser("table")
    p.add_argument("--params", default="6/4,8/6,16/11")
    p.add_argument("--rules", default=",".join(RULES))
    p.add_argument("--worlds", type=int, default=2)
    p.add_argument("--time-limit", type=int, default=600)
    a = ap.parse_args()
    {"bound": cmd_bound, "construct": cmd_construct, "ilp": cmd_ilp, "table": cmd_table, "liveness": cmd_liveness}[a.cmd](a)


if __name__ == "__main__":
    main()
