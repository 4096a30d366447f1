/* C twins of btlab's compiled kernels: the fastest straightforward C for the same
 * searches and the same counters, for the benchmark.
 *
 * Same trees, same order, same counters (nodes, backtracks, dead ends, checks,
 * solutions, max depth, status) as experiments/compiled/knights/kernel.py
 * (heuristics none and warnsdorff, ties by move order, open tours, first or count)
 * and experiments/compiled/queens_kernel.py (row-by-row bit-mask backtracking),
 * so that `python -m bench` checks that both walked the same tree before it
 * compares their times.
 *
 * Knight's tour, boards of at most 64 squares: the visited set is one 64-bit
 * mask, the neighbour tables are bytes in move order (and a 64-bit mask per
 * square), the stack holds (square, next index) per depth (with Warnsdorff the
 * ordered candidates too), the counters are plain increments: checks += the
 * square's neighbour count when it is first expanded (Warnsdorff: plus each
 * candidate's neighbour count; a candidate's degree is a popcount of its
 * neighbour mask less the visited set); a dead end is a placement short of a
 * full tour with no unvisited neighbour. Larger boards: a byte per square for
 * the visited set and 32-bit neighbour tables, and Warnsdorff keeps each square's count of unvisited
 * neighbours up to date on visit and undo.
 *
 * A placement is a backtrack when it is undone with the solution count
 * unchanged since it was made (its subtree held no solution).
 *
 * N-Queens: three masks per row, avail & -avail; checks (one per column tried,
 * docs/metrics.md) are n per row entered, 1 + nodes - solutions rows, less the
 * columns not yet tried in the rows still open when the search stops.
 *
 * Build: gcc -O2 -march=native -o dfs dfs.c
 * Usage: dfs knights ROWS COLS START_ROW START_COL HEURISTIC(0 none|1 warnsdorff) FIRST(0|1) MAX_NODES [general]
 *        dfs queens N FIRST(0|1) MAX_NODES
 * Output (one line): status nodes backtracks dead_ends checks solutions max_depth seconds
 * status: 1 solved, 2 exhausted, 3 node limit. seconds: CLOCK_MONOTONIC around the search.
 * First mode without a heuristic runs its own loop (knights64_first, knights_any_first);
 * `general` runs it on the count-mode loop instead (the twin of the kernel's general
 * loops). Ctrl-C or SIGTERM stops the first-mode loops within CHECK_EVERY placements:
 * "interrupted" on stderr, exit status 130.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>

static const int MOVES[8][2] = {{-1, -2}, {-2, -1}, {-2, 1}, {-1, 2},
                                {1, 2},   {2, 1},   {2, -1}, {1, -2}};

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct {
    int64_t nodes, backtracks, dead_ends, checks, solutions, max_depth;
    int status;
} Counters;

/* ------------------------------------------------------------ knight's tour, <= 64 squares */

typedef struct {
    uint8_t sq, next, n, pad;
    uint8_t cand[8];   /* warnsdorff: the ordered candidates */
    int64_t sol_at;    /* solutions when the square was placed */
} Frame64;

static inline __attribute__((always_inline)) Counters knights64(int rows, int cols, int start, int warnsdorff, int first, int64_t cap) {
    int size = rows * cols;
    uint8_t nbr[64][8], cnt[64];
    uint64_t nmask[64];
    Frame64 st[64];
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            int sq = r * cols + c, k = 0;
            nmask[sq] = 0;
            for (int m = 0; m < 8; m++) {
                int rr = r + MOVES[m][0], cc = c + MOVES[m][1];
                if (rr >= 0 && rr < rows && cc >= 0 && cc < cols) {
                    nbr[sq][k++] = (uint8_t)(rr * cols + cc);
                    nmask[sq] |= (uint64_t)1 << (rr * cols + cc);
                }
            }
            cnt[sq] = (uint8_t)k;
        }
    int64_t nodes = 0, backtracks = 0, dead_ends = 0, checks = 0, solutions = 0, max_depth = 0;
    uint64_t vis = 0;
    int depth = 0, sq = start, status = 2;
    for (;;) {
        /* place sq */
        if (nodes >= cap) { status = 3; break; }
        nodes++;
        uint64_t bit = (uint64_t)1 << sq;
        vis |= bit;
        depth++;
        if (depth > max_depth) max_depth = depth;
        if (depth == size) {
            solutions++;
            if (first) { status = 1; break; }
            vis ^= bit;
            depth--;
        } else {
            checks += cnt[sq];
            uint64_t open = nmask[sq] & ~vis;
            if (!open) {
                dead_ends++;
                backtracks++;
                vis ^= bit;
                depth--;
            } else {
                Frame64 *f = &st[depth - 1];
                f->sq = (uint8_t)sq;
                f->next = 0;
                f->sol_at = solutions;
                if (warnsdorff) {
                    int n = 0;
                    int keyd[8];
                    for (int k = 0; k < cnt[sq]; k++) {
                        int c = nbr[sq][k];
                        if (vis >> c & 1) continue;
                        checks += cnt[c];
                        int deg = __builtin_popcountll(nmask[c] & ~vis);
                        int j = n++;
                        while (j > 0 && keyd[j - 1] > deg) {
                            keyd[j] = keyd[j - 1];
                            f->cand[j] = f->cand[j - 1];
                            j--;
                        }
                        keyd[j] = deg;
                        f->cand[j] = (uint8_t)c;
                    }
                    f->n = (uint8_t)n;
                }
            }
        }
        /* the next child to place, undoing exhausted frames */
        int go = 0;
        while (depth > 0) {
            Frame64 *f = &st[depth - 1];
            if (warnsdorff) {
                if (f->next < f->n) { sq = f->cand[f->next++]; go = 1; break; }
            } else {
                int s = f->sq, k = f->next, m = cnt[s];
                while (k < m && (vis >> nbr[s][k] & 1)) k++;
                if (k < m) { sq = nbr[s][k]; f->next = (uint8_t)(k + 1); go = 1; break; }
            }
            vis ^= (uint64_t)1 << f->sq;
            depth--;
            if (solutions == f->sol_at) backtracks++;
        }
        if (!go) break;
    }
    Counters z = {nodes, backtracks, dead_ends, checks, solutions, max_depth, status};
    return z;
}

/* ------------------------------------------------------------ knight's tour, any board */

typedef struct {
    int32_t sq, next, n;
    int32_t cand[8];
    int64_t sol_at;
} Frame;

static inline __attribute__((always_inline)) Counters knights_any(int rows, int cols, int start, int warnsdorff, int first,
                            int64_t cap) {
    int size = rows * cols;
    int32_t (*nbr)[8] = calloc(size, sizeof *nbr);
    uint8_t *cnt = calloc(size, 1), *vis = calloc(size, 1), *deg = calloc(size, 1);
    Frame *st = calloc(size, sizeof *st);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            int sq = r * cols + c, k = 0;
            for (int m = 0; m < 8; m++) {
                int rr = r + MOVES[m][0], cc = c + MOVES[m][1];
                if (rr >= 0 && rr < rows && cc >= 0 && cc < cols) nbr[sq][k++] = rr * cols + cc;
            }
            cnt[sq] = deg[sq] = (uint8_t)k;
        }
    int64_t nodes = 0, backtracks = 0, dead_ends = 0, checks = 0, solutions = 0, max_depth = 0;
    int depth = 0, sq = start, status = 2;
    for (;;) {
        if (nodes >= cap) { status = 3; break; }
        nodes++;
        vis[sq] = 1;
        if (warnsdorff)
            for (int k = 0; k < cnt[sq]; k++) deg[nbr[sq][k]]--;
        depth++;
        if (depth > max_depth) max_depth = depth;
        int leaf = 0;
        if (depth == size) {
            solutions++;
            if (first) { status = 1; break; }
            leaf = 1;
        } else {
            checks += cnt[sq];
            int open = 0;
            if (warnsdorff) {
                open = deg[sq];
            } else {
                for (int k = 0; k < cnt[sq] && !open; k++) open = !vis[nbr[sq][k]];
            }
            if (!open) {
                dead_ends++;
                backtracks++;
                leaf = 1;
            } else {
                Frame *f = &st[depth - 1];
                f->sq = sq;
                f->next = 0;
                f->sol_at = solutions;
                if (warnsdorff) {
                    int n = 0, keyd[8];
                    for (int k = 0; k < cnt[sq]; k++) {
                        int c = nbr[sq][k];
                        if (vis[c]) continue;
                        checks += cnt[c];
                        int d = deg[c];
                        int j = n++;
                        while (j > 0 && keyd[j - 1] > d) {
                            keyd[j] = keyd[j - 1];
                            f->cand[j] = f->cand[j - 1];
                            j--;
                        }
                        keyd[j] = d;
                        f->cand[j] = c;
                    }
                    f->n = n;
                }
            }
        }
        if (leaf) {
            vis[sq] = 0;
            if (warnsdorff)
                for (int k = 0; k < cnt[sq]; k++) deg[nbr[sq][k]]++;
            depth--;
        }
        int go = 0;
        while (depth > 0) {
            Frame *f = &st[depth - 1];
            if (warnsdorff) {
                if (f->next < f->n) { sq = f->cand[f->next++]; go = 1; break; }
            } else {
                int s = f->sq, k = f->next, m = cnt[s];
                while (k < m && vis[nbr[s][k]]) k++;
                if (k < m) { sq = nbr[s][k]; f->next = k + 1; go = 1; break; }
            }
            int s = f->sq;
            vis[s] = 0;
            if (warnsdorff)
                for (int k = 0; k < cnt[s]; k++) deg[nbr[s][k]]++;
            depth--;
            if (solutions == f->sol_at) backtracks++;
        }
        if (!go) break;
    }
    Counters z = {nodes, backtracks, dead_ends, checks, solutions, max_depth, status};
    free(nbr); free(cnt); free(vis); free(deg); free(st);
    return z;
}

/* ------------------------------------------------------------ knight's tour, first mode, plain
 *
 * Plain move order to the first tour: what a first-mode search needs and nothing
 * else. No solution exists before the search ends, so every undone placement is a
 * backtrack (backtracks = nodes - depth at the end) and no frame keeps a solution
 * count; the stack is a square and a next move index per depth; the next child is
 * a tight skip over the visited onward squares in move order; the deepest
 * placement is kept on push. The node cap and the periodic check for Ctrl-C and
 * SIGTERM (a flag set by the signal handler, read every CHECK_EVERY placements)
 * share one comparison per placement.
 */

#define CHECK_EVERY ((int64_t)1 << 20)

static volatile sig_atomic_t stop_flag = 0;
static void on_signal(int sig) { (void)sig; stop_flag = 1; }

static inline int64_t next_check(int64_t nodes, int64_t cap) {
    return nodes + CHECK_EVERY < cap ? nodes + CHECK_EVERY : cap;
}

static Counters __attribute__((noinline)) knights64_first(int rows, int cols, int start,
                                                          int64_t cap) {
    int size = rows * cols;
    uint8_t nbr[64][8], cnt[64], path[64], nxt[64];
    uint64_t nmask[64];
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            int sq = r * cols + c, k = 0;
            nmask[sq] = 0;
            for (int m = 0; m < 8; m++) {
                int rr = r + MOVES[m][0], cc = c + MOVES[m][1];
                if (rr >= 0 && rr < rows && cc >= 0 && cc < cols) {
                    nbr[sq][k++] = (uint8_t)(rr * cols + cc);
                    nmask[sq] |= (uint64_t)1 << (rr * cols + cc);
                }
            }
            cnt[sq] = (uint8_t)k;
        }
    int64_t nodes = 0, dead_ends = 0, checks = 0, solutions = 0, max_depth = 0;
    int64_t check_at = next_check(0, cap);
    uint64_t vis = 0;
    int depth = 0, sq = start, status = 2;
    for (;;) {
        if (nodes == check_at) {
            if (nodes >= cap) { status = 3; break; }
            if (stop_flag) { status = 5; break; }
            check_at = next_check(nodes, cap);
        }
        nodes++;
        vis |= (uint64_t)1 << sq;
        path[depth++] = (uint8_t)sq;
        if (depth > max_depth) max_depth = depth;
        if (nmask[sq] & ~vis) {
            checks += cnt[sq];
            nxt[depth - 1] = 0;
        } else {
            if (depth == size) { solutions = 1; status = 1; break; }
            checks += cnt[sq];
            dead_ends++;
            vis ^= (uint64_t)1 << sq;
            if (--depth == 0) break;
        }
        for (;;) {  /* the next child to place, undoing exhausted frames */
            int s = path[depth - 1], k = nxt[depth - 1], m = cnt[s];
            while (k < m && (vis >> nbr[s][k] & 1)) k++;
            if (k < m) { nxt[depth - 1] = (uint8_t)(k + 1); sq = nbr[s][k]; break; }
            vis ^= (uint64_t)1 << s;
            if (--depth == 0) break;
        }
        if (depth == 0) break;
    }
    Counters z = {nodes, nodes - depth, dead_ends, checks, solutions, max_depth, status};
    return z;
}

static Counters __attribute__((noinline)) knights_any_first(int rows, int cols, int start,
                                                            int64_t cap) {
    int size = rows * cols;
    int32_t (*nbr)[8] = calloc(size, sizeof *nbr);
    int32_t *path = calloc(size, sizeof *path);
    uint8_t *cnt = calloc(size, 1), *vis = calloc(size, 1), *nxt = calloc(size, 1);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            int sq = r * cols + c, k = 0;
            for (int m = 0; m < 8; m++) {
                int rr = r + MOVES[m][0], cc = c + MOVES[m][1];
                if (rr >= 0 && rr < rows && cc >= 0 && cc < cols) nbr[sq][k++] = rr * cols + cc;
            }
            cnt[sq] = (uint8_t)k;
        }
    int64_t nodes = 0, dead_ends = 0, checks = 0, solutions = 0, max_depth = 0;
    int64_t check_at = next_check(0, cap);
    int depth = 0, sq = start, status = 2;
    for (;;) {
        if (nodes == check_at) {
            if (nodes >= cap) { status = 3; break; }
            if (stop_flag) { status = 5; break; }
            check_at = next_check(nodes, cap);
        }
        nodes++;
        vis[sq] = 1;
        path[depth++] = sq;
        if (depth > max_depth) max_depth = depth;
        int k = 0, m = cnt[sq];
        while (k < m && vis[nbr[sq][k]]) k++;
        if (k < m) {  /* the dead-end test found the first child */
            checks += m;
            nxt[depth - 1] = (uint8_t)(k + 1);
            sq = nbr[sq][k];
            continue;
        }
        if (depth == size) { solutions = 1; status = 1; break; }
        checks += m;
        dead_ends++;
        vis[sq] = 0;
        if (--depth == 0) break;
        for (;;) {  /* the next child to place, undoing exhausted frames */
            int s = path[depth - 1];
            k = nxt[depth - 1];
            m = cnt[s];
            while (k < m && vis[nbr[s][k]]) k++;
            if (k < m) { nxt[depth - 1] = (uint8_t)(k + 1); sq = nbr[s][k]; break; }
            vis[s] = 0;
            if (--depth == 0) break;
        }
        if (depth == 0) break;
    }
    Counters z = {nodes, nodes - depth, dead_ends, checks, solutions, max_depth, status};
    free(nbr); free(path); free(cnt); free(vis); free(nxt);
    return z;
}

/* One copy of each search per heuristic: the heuristic's tests fold away. */
static Counters __attribute__((noinline)) knights64_none(int rows, int cols, int start, int first,
                                                         int64_t cap) {
    return knights64(rows, cols, start, 0, first, cap);
}
static Counters __attribute__((noinline)) knights64_warnsdorff(int rows, int cols, int start,
                                                               int first, int64_t cap) {
    return knights64(rows, cols, start, 1, first, cap);
}
static Counters __attribute__((noinline)) knights_any_none(int rows, int cols, int start,
                                                           int first, int64_t cap) {
    return knights_any(rows, cols, start, 0, first, cap);
}
static Counters __attribute__((noinline)) knights_any_warnsdorff(int rows, int cols, int start,
                                                                 int first, int64_t cap) {
    return knights_any(rows, cols, start, 1, first, cap);
}

static Counters knights(int rows, int cols, int start, int warnsdorff, int first, int64_t cap,
                        int general) {
    if (first && !warnsdorff && !general)
        return rows * cols <= 64 ? knights64_first(rows, cols, start, cap)
                                 : knights_any_first(rows, cols, start, cap);
    if (rows * cols <= 64)
        return warnsdorff ? knights64_warnsdorff(rows, cols, start, first, cap)
                          : knights64_none(rows, cols, start, first, cap);
    return warnsdorff ? knights_any_warnsdorff(rows, cols, start, first, cap)
                      : knights_any_none(rows, cols, start, first, cap);
}

/* ------------------------------------------------------------ N-Queens, bit masks */

static Counters queens(int n, int first, int64_t cap) {
    uint64_t full = (~(uint64_t)0) >> (64 - n);
    uint64_t avail[65], cols[65], ld[65], rd[65];
    int64_t sol_at[65];
    int64_t nodes = 0, backtracks = 0, dead_ends = 0, solutions = 0, max_row = -1;
    int row = 0, last = n - 1, status = 2;
    int64_t untested = 0;  /* columns not tried in the rows open when the search stops */
    avail[0] = full; cols[0] = ld[0] = rd[0] = 0;
    for (;;) {
        uint64_t a = avail[row];
        if (a) {
            uint64_t bit = a & -a;
            if (nodes >= cap) {
                status = 3;
                untested = n - 1 - __builtin_ctzll(a);
                break;
            }
            avail[row] = a ^ bit;
            nodes++;
            if (row > max_row) max_row = row;
            if (row == last) {
                solutions++;
                if (first) { status = 1; untested = n - 1 - __builtin_ctzll(bit); break; }
                continue;
            }
            uint64_t c = cols[row] | bit, l = ((ld[row] | bit) << 1) & full,
                     r = (rd[row] | bit) >> 1;
            uint64_t freeb = full & ~(c | l | r);
            if (!freeb) { dead_ends++; backtracks++; continue; }
            row++;
            cols[row] = c; ld[row] = l; rd[row] = r; avail[row] = freeb;
            sol_at[row] = solutions;
            continue;
        }
        if (row == 0) break;
        if (solutions == sol_at[row]) backtracks++;
        row--;
    }
    int open = row;  /* rows 0..open-1 hold a queen still on the board */
    if (status == 2) open = 0;
    for (int r = 0; r < open; r++) untested += n - 1 - __builtin_ctzll(cols[r + 1] ^ cols[r]);
    int64_t checks = (int64_t)n * (1 + nodes - solutions) - untested;
    Counters z = {nodes, backtracks, dead_ends, checks, solutions, max_row + 1, status};
    return z;
}

int main(int argc, char **argv) {
    Counters z;
    double t0, t1;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    if ((argc == 9 || argc == 10) && !strcmp(argv[1], "knights")) {
        int rows = atoi(argv[2]), cols = atoi(argv[3]);
        int start = atoi(argv[4]) * cols + atoi(argv[5]);
        int warnsdorff = atoi(argv[6]), first = atoi(argv[7]);
        long long cap = atoll(argv[8]);
        if (rows < 1 || cols < 1 || start < 0 || start >= rows * cols) {
            fprintf(stderr, "bad board or start square\n");
            return 2;
        }
        t0 = now();
        z = knights(rows, cols, start, warnsdorff, first, cap,
                    argc == 10 && !strcmp(argv[9], "general"));
        t1 = now();
    } else if (argc == 5 && !strcmp(argv[1], "queens")) {
        int n = atoi(argv[2]);
        if (n < 1 || n > 64) { fprintf(stderr, "n must be 1..64\n"); return 2; }
        t0 = now();
        z = queens(n, atoi(argv[3]), atoll(argv[4]));
        t1 = now();
    } else {
        fprintf(stderr, "usage: dfs knights ROWS COLS SR SC HEURISTIC FIRST MAX_NODES | "
                        "dfs queens N FIRST MAX_NODES\n");
        return 2;
    }
    if (z.status == 5) {
        fprintf(stderr, "interrupted\n");
        return 130;
    }
    printf("%d %lld %lld %lld %lld %lld %lld %.9f\n", z.status, (long long)z.nodes,
           (long long)z.backtracks, (long long)z.dead_ends, (long long)z.checks,
           (long long)z.solutions, (long long)z.max_depth, t1 - t0);
    return 0;
}
