/* The depth-first searches of btlab's compiled kernels, written in C, for the benchmark.
 *
 * Same trees, same order, same counters as experiments/compiled/knights_kernel.py
 * (heuristics none and warnsdorff, ties by move order, open tours) and
 * experiments/compiled/queens_kernel.py (row-by-row bit-mask backtracking), so
 * that `python -m bench` can compare nodes per second side by side and check
 * that both walked the same tree.
 *
 * Build: gcc -O2 -o dfs dfs.c
 * Usage: dfs knights ROWS COLS START_ROW START_COL HEURISTIC(0 none|1 warnsdorff) FIRST(0|1) MAX_NODES
 *        dfs queens N FIRST(0|1) MAX_NODES
 * Output (one line): status nodes backtracks dead_ends checks solutions max_depth seconds
 * status: 1 solved, 2 exhausted, 3 node limit. seconds: CLOCK_MONOTONIC around the search.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* List and order the unvisited onward squares of sq into frame[0..n). */
static inline int order(int sq, const uint8_t *visited, const int32_t (*nbr)[8],
                        const int32_t *count, int heuristic, int32_t *frame, int64_t *checks) {
    int around = count[sq];
    int n = 0;
    *checks += around;
    for (int k = 0; k < around; k++) {
        int c = nbr[sq][k];
        if (!visited[c]) frame[n++] = c;
    }
    if (heuristic == 0 || n == 0) return n;
    if (n == 1) {
        *checks += count[frame[0]];
        return n;
    }
    int64_t keyd[8];
    int m = 0;
    for (int i = 0; i < n; i++) {
        int c = frame[i];
        int onward = count[c];
        int64_t deg = 0;
        *checks += onward;
        for (int k = 0; k < onward; k++)
            if (!visited[nbr[c][k]]) deg++;
        int j = m;
        while (j > 0 && keyd[j - 1] > deg) {
            keyd[j] = keyd[j - 1];
            frame[j] = frame[j - 1];
            j--;
        }
        keyd[j] = deg;
        frame[j] = c;
        m++;
    }
    return n;
}

static Counters knights(int rows, int cols, int start, int heuristic, int first, int64_t cap) {
    int size = rows * cols;
    int32_t (*nbr)[8] = calloc(size, sizeof *nbr);
    int32_t *count = calloc(size, sizeof *count);
    uint8_t *visited = calloc(size, 1);
    int32_t *path = calloc(size, sizeof *path);
    int32_t (*frames)[10] = calloc(size, sizeof *frames);
    int64_t *found = calloc(size, sizeof *found);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            int sq = r * cols + c, k = 0;
            for (int m = 0; m < 8; m++) {
                int rr = r + MOVES[m][0], cc = c + MOVES[m][1];
                if (rr >= 0 && rr < rows && cc >= 0 && cc < cols) nbr[sq][k++] = rr * cols + cc;
            }
            count[sq] = k;
        }
    Counters z = {0};
    int64_t nodes = 0, backtracks = 0, dead_ends = 0, checks = 0, solutions = 0, max_depth = 0;
    int depth = 0, sq = start, status = 2;
    for (;;) {
        if (nodes >= cap) { status = 3; break; }
        nodes++;
        visited[sq] = 1;
        path[depth++] = sq;
        if (depth > max_depth) max_depth = depth;
        int leaf_found = -1;
        if (depth == size) {
            solutions++;
            if (first) { status = 1; break; }
            leaf_found = 1;
        } else {
            int top = depth - 1;
            int n = order(sq, visited, (const int32_t (*)[8])nbr, count, heuristic, frames[top],
                          &checks);
            if (n > 0) {
                frames[top][8] = n;
                frames[top][9] = 0;
                found[top] = 0;
            } else {
                dead_ends++;
                leaf_found = 0;
            }
        }
        if (leaf_found >= 0) {
            visited[sq] = 0;
            depth--;
            if (!leaf_found) backtracks++;
            if (depth == 0) break;
            found[depth - 1] += leaf_found;
        }
        while (depth > 0) {
            int top = depth - 1;
            int i = frames[top][9];
            if (i < frames[top][8]) {
                frames[top][9] = i + 1;
                sq = frames[top][i];
                break;
            }
            int64_t f = found[top];
            depth--;
            visited[path[depth]] = 0;
            if (!f) backtracks++;
            if (depth > 0) found[depth - 1] += f;
        }
        if (depth == 0) break;
    }
    z.nodes = nodes; z.backtracks = backtracks; z.dead_ends = dead_ends; z.checks = checks;
    z.solutions = solutions; z.max_depth = max_depth; z.status = status;
    free(nbr); free(count); free(visited); free(path); free(frames); free(found);
    return z;
}

static Counters queens(int n, int first, int64_t cap) {
    uint64_t full = (~(uint64_t)0) >> (64 - n);
    uint64_t avail[64], attacked[64], left[64], right[64];
    int64_t tried[64], found[64];
    int64_t nodes = 0, backtracks = 0, dead_ends = 0, checks = 0, solutions = 0, max_depth = 0;
    int row = 0, last = n - 1, status = 2;
    avail[0] = full; attacked[0] = left[0] = right[0] = 0; tried[0] = 0; found[0] = 0;
    for (;;) {
        uint64_t a = avail[row];
        if (a) {
            int64_t col = __builtin_ctzll(a);
            checks += col - tried[row] + 1;
            tried[row] = col + 1;
            if (nodes >= cap) { status = 3; break; }
            avail[row] = a & (a - 1);
            nodes++;
            if (row == last) {
                max_depth = n;
                solutions++;
                if (first) { status = 1; break; }
                found[row]++;
                continue;
            }
            if (row >= max_depth) max_depth = row + 1;
            uint64_t bit = (uint64_t)1 << col;
            uint64_t cols = attacked[row] | bit;
            uint64_t ld = ((left[row] | bit) << 1) & full;
            uint64_t rd = (right[row] | bit) >> 1;
            uint64_t freeb = full & ~(cols | ld | rd);
            if (!freeb) {
                checks += n;
                dead_ends++;
                backtracks++;
                continue;
            }
            row++;
            attacked[row] = cols; left[row] = ld; right[row] = rd;
            avail[row] = freeb; tried[row] = 0; found[row] = 0;
            continue;
        }
        checks += n - tried[row];
        tried[row] = n;
        if (row == 0) break;
        int64_t below = found[row];
        row--;
        if (below) found[row] += below; else backtracks++;
    }
    Counters z = {nodes, backtracks, dead_ends, checks, solutions, max_depth, status};
    return z;
}

int main(int argc, char **argv) {
    Counters z;
    double t0, t1;
    if (argc == 9 && !strcmp(argv[1], "knights")) {
        int rows = atoi(argv[2]), cols = atoi(argv[3]);
        int start = atoi(argv[4]) * cols + atoi(argv[5]);
        t0 = now();
        z = knights(rows, cols, start, atoi(argv[6]), atoi(argv[7]), atoll(argv[8]));
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
    printf("%d %lld %lld %lld %lld %lld %lld %.9f\n", z.status, (long long)z.nodes,
           (long long)z.backtracks, (long long)z.dead_ends, (long long)z.checks,
           (long long)z.solutions, (long long)z.max_depth, t1 - t0);
    return 0;
}
