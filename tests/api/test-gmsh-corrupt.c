/* Randomized corruption of the Gmsh test meshes: 2000 mutated files (500 per
 * file of tests/data, from a fixed-seed LCG, so every run tries the same
 * ones): byte flips, line deletions, duplications and swaps, truncations,
 * digit changes, inserted tokens, and several at once. Each read must return
 * a status (success, FEA_ERR_IO naming the file and a line, FEA_ERR_UNSUPPORTED
 * or FEA_ERR_INVALID_ARG) and never crash; a mesh that loads must pass the
 * library's own checks. The sanitizer build (ASan with leak detection, UBSan)
 * turns any memory error or leak on these paths into a failure.
 *
 * Last, a small hand-written file checks that messages about a physical
 * group's facets name the nodes by the file's tags, not the mesh's own
 * 0-based numbers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "mesh-common.h"

#define MUTATIONS_PER_FILE 500

struct rng {
  unsigned long long state;
};

static unsigned long long next(struct rng *r) {
  r->state = r->state * 6364136223846793005ull + 1442695040888963407ull;
  return r->state >> 33;
}

static size_t below(struct rng *r, size_t n) { return n ? (size_t)(next(r) % n) : 0; }

struct buffer {
  char *data;
  size_t len;
};

static struct buffer slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "%s: %s", path, strerror(errno));
  struct buffer b = {malloc(1 << 20), 0};
  b.len = fread(b.data, 1, 1 << 20, f);
  fclose(f);
  cr_assert(b.len > 0 && b.len < (1 << 20));
  return b;
}

/* Start of the line holding byte `pos`, and the start of the next line. */
static size_t line_start(const struct buffer *b, size_t pos) {
  while (pos > 0 && b->data[pos - 1] != '\n') pos--;
  return pos;
}

static size_t line_after(const struct buffer *b, size_t pos) {
  while (pos < b->len && b->data[pos] != '\n') pos++;
  return pos < b->len ? pos + 1 : pos;
}

/* Replace bytes [from, to) of b by `with` (n bytes); b has room for it. */
static void splice(struct buffer *b, size_t from, size_t to, const char *with, size_t n) {
  memmove(b->data + from + n, b->data + to, b->len - to);
  memcpy(b->data + from, with, n);
  b->len = b->len - (to - from) + n;
}

/* clang-format off */
static const char *const tokens[] = {"-1", "0", "nan", "inf", "1e308", "99999999999999999999",
                                     "$Nodes", "$EndElements", "4.1", " ", "\t", "x", "-",
                                     "2147483648", "9223372036854775807", "\r", "\n"};
/* clang-format on */

/* One mutation of b (which has room for 64 KiB more); returns its name. */
static const char *mutate(struct rng *r, struct buffer *b, int kind) {
  size_t pos = below(r, b->len);
  switch (kind) {
  case 0: /* flip a bit, or set a byte to anything (NUL included) */
    if (next(r) & 1)
      b->data[pos] ^= (char)(1u << below(r, 8));
    else
      b->data[pos] = (char)below(r, 256);
    return "byte";
  case 1: { /* delete a line */
    size_t s = line_start(b, pos);
    splice(b, s, line_after(b, pos), "", 0);
    return "delete line";
  }
  case 2: { /* duplicate a line */
    size_t s = line_start(b, pos), e = line_after(b, pos);
    char copy[4096];
    size_t n = e - s < sizeof copy ? e - s : sizeof copy;
    memcpy(copy, b->data + s, n);
    splice(b, e, e, copy, n);
    return "duplicate line";
  }
  case 3: /* truncate */ b->len = pos; return "truncate";
  case 4: { /* change a digit */
    while (pos < b->len && (b->data[pos] < '0' || b->data[pos] > '9')) pos++;
    if (pos < b->len) b->data[pos] = (char)('0' + below(r, 10));
    return "digit";
  }
  case 5: { /* swap a line with the next one */
    size_t s = line_start(b, pos), m = line_after(b, pos), e = line_after(b, m);
    char copy[4096];
    size_t n = m - s < sizeof copy ? m - s : sizeof copy;
    memcpy(copy, b->data + s, n);
    splice(b, s, m, "", 0);
    e -= m - s;
    splice(b, e, e, copy, n);
    return "swap lines";
  }
  case 6: { /* insert a token */
    const char *t = tokens[below(r, sizeof tokens / sizeof tokens[0])];
    splice(b, pos, pos, t, strlen(t));
    return "insert token";
  }
  }
  return "none";
}

static void write_file(const char *path, const struct buffer *b) {
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  cr_assert_eq(fwrite(b->data, 1, b->len, f), b->len);
  cr_assert_eq(fclose(f), 0);
}

static void corrupt(const char *name, unsigned long long seed) {
  const char *dir = getenv("FEA_TEST_DATA");
  if (!dir || !*dir) cr_skip_test("FEA_TEST_DATA is not set: no test meshes");
  char src[512], tmp[256], path[300];
  snprintf(src, sizeof src, "%s/%s", dir, name);
  const char *base = getenv("TMPDIR");
  snprintf(tmp, sizeof tmp, "%s/fea-corrupt-XXXXXX", base && *base ? base : "/tmp");
  cr_assert_not_null(mkdtemp(tmp));
  snprintf(path, sizeof path, "%s/%s", tmp, name);
  const struct buffer original = slurp(src);
  struct buffer b = {malloc(original.len + (1 << 17)), 0};
  fea_context *ctx = open_ref();
  struct rng r = {seed};
  int loaded = 0, failed = 0;
  for (int i = 0; i < MUTATIONS_PER_FILE; i++) {
    memcpy(b.data, original.data, original.len);
    b.len = original.len;
    const int kind = (int)below(&r, 8);
    const char *what;
    if (kind < 7) {
      what = mutate(&r, &b, kind);
    } else { /* several at once */
      what = "several";
      for (int k = 2 + (int)below(&r, 4); k > 0; k--) mutate(&r, &b, (int)below(&r, 7));
    }
    write_file(path, &b);
    fea_mesh *m = (fea_mesh *)&m;
    fea_status s = fea_mesh_read_gmsh(ctx, path, &m);
    const char *msg = fea_context_last_error(ctx);
    cr_assert(s == FEA_SUCCESS || s == FEA_ERR_IO || s == FEA_ERR_UNSUPPORTED ||
                  s == FEA_ERR_INVALID_ARG,
              "mutation %d (%s): status %s: %s", i, what, fea_status_string(s), msg);
    if (s != FEA_SUCCESS) {
      failed++;
      cr_assert_null(m, "mutation %d (%s): a failed read left *out set", i, what);
      /* The message names the file and a line: "path:LINE: ". */
      const char *at = strstr(msg, path);
      long long line = -1;
      cr_assert(at && sscanf(at + strlen(path), ":%lld: ", &line) == 1 && line >= 1,
                "mutation %d (%s): the message names no line of %s: %s", i, what, path, msg);
      continue;
    }
    loaded++;
    struct arrays a = get_arrays(m);
    cr_assert(a.nn >= 1 && a.nc >= 1 && a.dim >= 1 && a.dim <= 3);
    fea_status again = revalidate(ctx, &a);
    cr_assert_eq(again, FEA_SUCCESS, "mutation %d (%s) loaded a mesh the library rejects: %s", i,
                 what, fea_context_last_error(ctx));
    free_arrays(&a);
    OK(fea_mesh_destroy(&m));
  }
  cr_log_info("%s: %d mutated files loaded, %d refused", name, loaded, failed);
  /* Both outcomes occur, or the mutations do not test what they should. */
  cr_assert(loaded > 0 && failed > MUTATIONS_PER_FILE / 4, "%s: %d loaded, %d refused", name,
            loaded, failed);
  OK(fea_context_destroy(&ctx));
  free(b.data);
  free(original.data);
  unlink(path);
  rmdir(tmp);
}

Test(gmsh_corrupt, square_tri) { corrupt("square-tri.msh", 1); }
Test(gmsh_corrupt, square_quad) { corrupt("square-quad.msh", 2); }
Test(gmsh_corrupt, cube_tet) { corrupt("cube-tet.msh", 3); }
Test(gmsh_corrupt, cube_hex) { corrupt("cube-hex.msh", 4); }

/* ---- messages in the file's node tags ------------------------------------
 * Two quads whose nodes carry the tags 101..106 (so that the mesh's own
 * 0-based numbers, 0..5, differ from them). Physical curve 7 holds the
 * edge 102-105 between the quads; curves 8 and 9 both hold the west edge
 * 101-104. A part naming 7 is refused for an interior facet, parts naming 8
 * and 9 for a facet with two conditions; both messages must name the nodes
 * as the file does, by their tags. */
static const char two_quads[] =
    "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n"
    "$Entities\n0 3 1 0\n"
    "1 1 0 0 1 1 0 1 7 0\n"
    "2 0 0 0 0 1 0 1 8 0\n"
    "3 0 0 0 0 1 0 1 9 0\n"
    "1 0 0 0 2 1 0 1 10 0\n"
    "$EndEntities\n"
    "$Nodes\n1 6 101 106\n2 1 0 6\n101\n102\n103\n104\n105\n106\n"
    "0 0 0\n1 0 0\n2 0 0\n0 1 0\n1 1 0\n2 1 0\n$EndNodes\n"
    "$Elements\n4 5 1 5\n"
    "1 1 1 1\n1 102 105\n"
    "1 2 1 1\n2 101 104\n"
    "1 3 1 1\n3 104 101\n"
    "2 1 3 2\n4 101 102 105 104\n5 102 103 106 105\n"
    "$EndElements\n";

Test(gmsh_messages, facets_are_named_by_node_tags) {
  const char *base = getenv("TMPDIR");
  char dir[256], path[300];
  snprintf(dir, sizeof dir, "%s/fea-tags-XXXXXX", base && *base ? base : "/tmp");
  cr_assert_not_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/two-quads.msh", dir);
  const struct buffer b = {(char *)two_quads, sizeof two_quads - 1};
  write_file(path, &b);
  fea_context *ctx = open_ref();
  fea_mesh *m = NULL;
  OK(fea_mesh_read_gmsh(ctx, path, &m));
  fea_space *s = NULL;
  OK(fea_space_create_lagrange(m, 1, FEA_NODES_EQUISPACED, &s));
  fea_boundary_part parts[2] = {{7, NULL, {FEA_BC_NEUMANN, 0, NULL, NULL}},
                                {9, NULL, {FEA_BC_NEUMANN, 0, NULL, NULL}}};
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.parts = parts;
  pd.num_parts = 1;
  fea_problem *pb = NULL;
  EXPECT_FAIL(fea_problem_create_poisson(s, &pd, &pb), FEA_ERR_INVALID_ARG, ctx,
              "parts[0] (physical group 7) holds the facet of nodes 102 105 (node tags of the "
              "file), which is not on the mesh's boundary");
  parts[0].physical_tag = 8;
  pd.num_parts = 2;
  EXPECT_FAIL(fea_problem_create_poisson(s, &pd, &pb), FEA_ERR_INVALID_ARG, ctx,
              "share the boundary facet of nodes 101 104 (node tags of the file)");
  cr_assert_null(pb);
  OK(fea_space_destroy(&s));
  OK(fea_mesh_destroy(&m));
  OK(fea_context_destroy(&ctx));
  unlink(path);
  rmdir(dir);
}
