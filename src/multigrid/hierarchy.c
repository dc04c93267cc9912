/* Multigrid hierarchy: the coarse levels and the transfers between them
 * (Lagrange spaces on structured meshes here; B-spline and NURBS patches in
 * hierarchy-bspline.c, which the build below hands them to).
 *
 * Coarse levels are rediscretizations, not Galerkin products: the structured
 * mesh with half the cells per direction (same box, same simplex split, same
 * point map), its order-1 Lagrange space and the caller's problem
 * description on it. For constant-coefficient Poisson on nested conforming
 * meshes the two agree (P^T A_h P = A_2h, tested), and rediscretization lets
 * every level use the matrix-free operators.
 *
 * A problem of order p > 1 (Q_p on quadrilaterals or hexahedra) first goes
 * to Q1 on the same mesh (p-multigrid, transfer-p.c: grid sweeps where both
 * levels' free DoFs are grids of interior nodes, else CSR rows), and the
 * meshes coarsen from there.
 *
 * Prolongation is the coarse space's interpolation at the fine vertices. On
 * structured meshes that is index arithmetic on the vertex grid (order-1
 * DoFs are the vertices, numbered lexicographically, x fastest; see
 * mesh-structured.c): a fine vertex at grid position i lies on the coarse
 * vertex i / 2 where all coordinates are even; where some are odd ("the odd
 * directions") it is the midpoint of a coarse segment:
 * - Q1 (quads, hexes): the tensor-product average over the 2^m coarse
 *   vertices around it (m odd directions);
 * - P1 (triangles cut along (0,0)-(1,1), Kuhn tetrahedra whose every edge,
 *   face diagonal and cube diagonal runs from the lower to the higher corner):
 *   the segment from the "lo" corner (odd coordinates - 1) to the "hi" corner
 *   (odd coordinates + 1) is an edge of the coarse mesh, and the coarse
 *   function is linear along it, so the average of those two vertices.
 * Coarse Dirichlet DoFs are dropped (their correction is zero), fine
 * Dirichlet DoFs have no row.
 *
 * Vector spaces (ncomp > 1: elasticity, DoF c + ncomp i): every level keeps
 * the components and the elasticity description (material, loads, which
 * components each side fixes), and the transfer is the scalar one applied
 * to each component: fine DoF (v, c) takes the scalar row of v on the coarse
 * DoFs (w, c). A component fixed at a coarse node (a roller) is dropped from
 * that row alone.
 *
 * Mapped meshes (a point map F of the box, mesh-structured.c): every level
 * is F on its own box grid, so the levels are not nested (a fine node
 * between two coarse nodes lies on the curve, not on the coarse chord) and
 * the index arithmetic above is the interpolation in box coordinates. It is
 * still the right transfer: the mapped Q1/P1 stiffness matrix of a level is
 * the box discretization of the pulled-back operator
 * -div(det J J^-1 sigma J^-T grad) with J the Jacobian of that level's
 * piecewise (multi)linear geometry, a uniformly elliptic coefficient for a
 * smooth orientation-preserving F, for which box interpolation is the
 * standard geometric multigrid transfer; the levels' geometries differ by
 * O(h^2), a consistent perturbation of the coarse operator. The weights
 * still sum to 1, so constants are transferred exactly. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "base/progress.h"
#include "linalg/csr-product.h"
#include "internal/error.h"
#include "disc/mesh.h"
#include "multigrid-impl.h"

fea_status fea_mg_check_problem(fea_context *ctx, const fea_problem *pb) {
  const fea_space *s = pb->space;
  if (fea_mg_is_bspline(pb)) {
    FEA_CHECK(s->ncomp == 1, ctx, FEA_ERR_UNSUPPORTED,
              "B-spline multigrid takes scalar spaces; the problem's space has %d components "
              "(vector problems are served on Lagrange spaces of structured meshes)",
              s->ncomp);
    return fea_mg_bspline_check(ctx, pb);
  }
  /* Vector levels are rediscretized from the elasticity description; a user's
   * element_form system has no known coarse form or node blocks. */
  FEA_CHECK(s->ncomp == 1 || pb->elastic, ctx, FEA_ERR_UNSUPPORTED,
            "multigrid on a space with %d components takes elasticity problems "
            "(fea_problem_create_elasticity()); this one is a system of its own element_form",
            s->ncomp);
  const fea_mesh *m = s->mesh;
  FEA_CHECK(m && m->structured, ctx, FEA_ERR_UNSUPPORTED,
            "multigrid needs a structured box mesh (fea_mesh_create_structured); the problem's "
            "%s mesh was made from arrays, by refinement or from a Gmsh file",
            m ? fea_cell_name(m->type) : "(no)");
  FEA_CHECK(m->dim == 2 || m->dim == 3, ctx, FEA_ERR_UNSUPPORTED,
            "multigrid supports 2D and 3D meshes; the problem's structured mesh is %dD", m->dim);
  FEA_CHECK(s->degree[0] == 1 || !m->simplices, ctx, FEA_ERR_UNSUPPORTED,
            "multigrid on simplices needs an order-1 Lagrange space (P1); the problem's space "
            "is P%d (orders above 1 are served on quadrilaterals and hexahedra)",
            s->degree[0]);
  /* Order 1 numbers DoFs as the mesh nodes: the grid arithmetic relies on it. */
  FEA_CHECK(s->degree[0] > 1 || s->num_dofs == m->num_nodes, ctx, FEA_ERR_UNSUPPORTED,
            "the order-1 space has %lld DoFs but its mesh %lld nodes", (long long)s->num_dofs,
            (long long)m->num_nodes);
  FEA_CHECK(pb->num_free > 0, ctx, FEA_ERR_INVALID_ARG,
            "the problem has no free DoFs (every DoF of its %lld cells is on the Dirichlet "
            "boundary): nothing to solve",
            (long long)m->num_cells);
  return FEA_SUCCESS;
}

/* ---- prolongation ---------------------------------------------------------------------------- */

/* Grid position of vertex v of a structured mesh. */
static void vertex_position(const fea_mesh *m, fea_index v, fea_index pos[3]) {
  fea_index stride = 1;
  for (int k = 0; k < 3; k++) pos[k] = 0;
  for (int k = 0; k < m->dim; k++) {
    pos[k] = (v / stride) % (m->n[k] + 1);
    stride *= m->n[k] + 1;
  }
}

static fea_index vertex_number(const fea_mesh *m, const fea_index pos[3]) {
  fea_index v = 0, stride = 1;
  for (int k = 0; k < m->dim; k++) {
    v += pos[k] * stride;
    stride *= m->n[k] + 1;
  }
  return v;
}

/* The coarse free DoFs (sorted) and weights of the row of component comp of
 * fine vertex v (nc components); returns their count (at most 8). */
static int row_entries(const fea_problem *fine, const fea_problem *coarse, fea_index v, int comp,
                       int nc, fea_index col[8], double val[8]) {
  const fea_mesh *fm = fine->space->mesh, *cm = coarse->space->mesh;
  const int dim = fm->dim;
  fea_index pos[3], cpos[3];
  vertex_position(fm, v, pos);
  int odd = 0, m = 0;
  for (int k = 0; k < dim; k++)
    if (pos[k] & 1) odd |= 1 << k, m++;
  /* Corner c's bit k picks pos + 1 (set) or pos - 1 in odd direction k. Q1
   * takes every subset of the odd directions, P1 only none (lo) and all (hi). */
  int count = 0;
  for (int c = 0; c < (1 << dim); c++) {
    if ((c & ~odd) != 0) continue;
    if (fm->simplices && c != 0 && c != odd) continue;
    for (int k = 0; k < 3; k++) {
      const int step = (c >> k & 1) ? 1 : -1;
      cpos[k] = k >= dim ? 0 : (odd >> k & 1) ? (pos[k] + step) / 2 : pos[k] / 2;
    }
    const fea_index r = coarse->free_index[comp + nc * vertex_number(cm, cpos)];
    if (r < 0) continue; /* coarse Dirichlet DoF: no correction there */
    const double w = fm->simplices ? (m ? 0.5 : 1.0) : 1.0 / (double)(1 << m);
    count = fea_mg_row_insert(col, val, count, r, w);
  }
  return count;
}

fea_status fea_mg_prolongation(fea_context *ctx, const fea_problem *fine, const fea_problem *coarse,
                               fea_matrix **P) {
  const fea_mesh *fm = fine->space->mesh, *cm = coarse->space->mesh;
  FEA_CHECK(fm->structured && cm->structured && fm->dim == cm->dim &&
                fm->simplices == cm->simplices,
            ctx, FEA_ERR_INVALID_ARG, "prolongation between unrelated meshes");
  for (int k = 0; k < fm->dim; k++)
    FEA_CHECK(fm->n[k] == 2 * cm->n[k], ctx, FEA_ERR_INVALID_ARG,
              "direction %d: the fine mesh has %lld cells, not twice the coarse mesh's %lld", k,
              (long long)fm->n[k], (long long)cm->n[k]);
  FEA_CHECK(fine->space->ncomp == coarse->space->ncomp, ctx, FEA_ERR_INVALID_ARG,
            "prolongation between spaces of %d and %d components", fine->space->ncomp,
            coarse->space->ncomp);
  const int nc = fine->space->ncomp;
  fea_index col[8], nnz = 0;
  double val[8];
  for (fea_index v = 0; v < fm->num_nodes; v++)
    for (int k = 0; k < nc; k++)
      if (fine->free_index[k + nc * v] >= 0) nnz += row_entries(fine, coarse, v, k, nc, col, val);
  fea_matrix *p;
  FEA_CALL(fea_matrix_alloc(ctx, fine->num_free, coarse->num_free, nnz, &p));
  fea_index at = 0;
  for (fea_index v = 0; v < fm->num_nodes; v++)
    for (int k = 0; k < nc; k++) {
      const fea_index r = fine->free_index[k + nc * v];
      if (r < 0) continue;
      const int c = row_entries(fine, coarse, v, k, nc, col, val);
      memcpy(p->col_idx + at, col, (size_t)c * sizeof *col);
      memcpy(p->values + at, val, (size_t)c * sizeof *val);
      at += c;
      p->row_ptr[r + 1] = at; /* free DoFs are numbered in vector DoF order */
    }
  *P = p;
  return FEA_SUCCESS;
}

/* ---- levels ---------------------------------------------------------------------------------- */

/* The mesh of level l: fine's with half its cells per direction (for a
 * mapped mesh the same map on the coarser box, so every level's nodes lie on
 * the curved domain). A map curved on the scale of the coarse cells inverts
 * them there though the caller's mesh is fine: the message then says how to
 * stop above that level. */
static fea_status coarse_mesh(const fea_mg *mg, int l, const fea_mesh *fm, fea_mesh **out) {
  fea_status st = fea_mesh_build_coarse(fm, out);
  if (st != FEA_ERR_INVALID_ARG || !fm->mapped) return st;
  char why[FEA_ERROR_LEN];
  snprintf(why, sizeof why, "%s", fea_thread_last_error_text());
  char *at = strrchr(why, '('); /* its " (file.c:LINE)": this message gets its own */
  if (at && at > why && strstr(at, ".c:")) at[-1] = '\0';
  fea_index cells = fm->n[0] / 2; /* levels stop before a direction goes below coarsest_cells */
  for (int k = 1; k < fm->dim; k++) cells = fm->n[k] / 2 < cells ? fm->n[k] / 2 : cells;
  return FEA_ERROR(mg->ctx, st,
                   "multigrid level %d: %s; a coarsest_cells above %lld (now %lld) keeps the "
                   "levels finer",
                   l, why, (long long)cells, (long long)mg->desc.coarsest_cells);
}

/* fine's problem on the order-1 space s: its components, and the elasticity
 * description (material, loads, fixed components per side) when it has one. */
static fea_status rediscretize(const fea_problem *fine, fea_space *s, fea_problem **out) {
  s->ncomp = fine->space->ncomp;
  if (fine->elastic) return fea_problem_build_elastic(s, &fine->desc, fine->elastic, out);
  return fea_problem_build(s, &fine->desc, out);
}

/* The problem of level l on coarse_mesh; the time of its mesh and space,
 * and of the problem, goes into mg->phases. */
static fea_status coarse_problem(fea_mg *mg, int l, const fea_problem *fine, fea_problem **out) {
  fea_mg_setup_phases *phases = &mg->phases;
  fea_mesh *m = NULL;
  fea_space *s = NULL;
  const double t0 = omp_get_wtime();
  fea_status st = coarse_mesh(mg, l, fine->space->mesh, &m);
  if (st == FEA_SUCCESS) st = fea_space_lagrange_build(m, 1, FEA_NODES_EQUISPACED, &s);
  const double t1 = omp_get_wtime();
  if (st == FEA_SUCCESS) st = rediscretize(fine, s, out);
  phases->meshes += t1 - t0;
  phases->problems += omp_get_wtime() - t1;
  /* The problem holds references on its space and mesh. */
  fea_object_release(s);
  fea_object_release(m);
  return st;
}

/* Level 1 of a Q_p problem (p > 1): the same mesh with order 1. */
static fea_status order1_problem(fea_mg *mg, const fea_problem *fine, fea_problem **out) {
  fea_space *s = NULL;
  const double t0 = omp_get_wtime();
  /* The reference count is bookkeeping, not the mesh's state. */
  fea_status st = fea_space_lagrange_build((fea_mesh *)fine->space->mesh, 1, FEA_NODES_EQUISPACED,
                                           &s);
  const double t1 = omp_get_wtime();
  if (st == FEA_SUCCESS) st = rediscretize(fine, s, out);
  mg->phases.meshes += t1 - t0;
  mg->phases.problems += omp_get_wtime() - t1;
  fea_object_release(s);
  return st;
}

/* Levels: halve while every direction has an even count that stays >= coarsest. */
static int count_levels(const fea_mesh *m, fea_index coarsest) {
  fea_index n[3] = {m->n[0], m->n[1], m->n[2]};
  int levels = 1;
  for (;;) {
    for (int k = 0; k < m->dim; k++)
      if (n[k] % 2 != 0 || n[k] / 2 < coarsest) return levels;
    for (int k = 0; k < m->dim; k++) n[k] /= 2;
    levels++;
  }
}

/* r and w on every level, b and x below the finest, in the kernels' memory. */
static fea_status alloc_work(const fea_mg *mg, fea_mg_level *lv, int coarse) {
  const fea_mg_kernels *k = mg->k;
  FEA_CALL(k->alloc(mg->ctx, lv->n, &lv->r));
  FEA_CALL(k->alloc(mg->ctx, lv->n, &lv->w));
  if (coarse) {
    FEA_CALL(k->alloc(mg->ctx, lv->n, &lv->b));
    FEA_CALL(k->alloc(mg->ctx, lv->n, &lv->x));
  }
  return FEA_SUCCESS;
}

static void level_set(fea_mg_level *lv, fea_problem *pb) {
  lv->problem = pb;
  lv->n = pb->num_free;
  /* Structured meshes: cells per direction; B-splines: elements (1 beyond dim). */
  for (int k = 0; k < 3; k++)
    lv->cells[k] = pb->space->mesh ? pb->space->mesh->n[k]
                                   : (pb->space->elements[k] > 0 ? pb->space->elements[k] : 1);
}

/* The levels of a B-spline problem: the coarse spaces first (how many
 * depends on the knots and the geometry), then their problems and the
 * knot-insertion prolongations (CSR on every backend). */
#define FEA_MG_MAX_LEVELS 64
static fea_status bspline_hierarchy(fea_mg *mg, const fea_problem *problem) {
  fea_context *ctx = mg->ctx;
  fea_space *sp[FEA_MG_MAX_LEVELS];
  int L = 1;
  sp[0] = problem->space;
  fea_status st = FEA_SUCCESS;
  double t0 = omp_get_wtime();
  while (L < FEA_MG_MAX_LEVELS && fea_mg_bspline_can_halve(sp[L - 1], mg->desc.coarsest_cells)) {
    st = fea_mg_bspline_coarse_space(sp[L - 1], &sp[L]);
    if (st != FEA_SUCCESS) break;
    L++;
  }
  mg->phases.meshes += omp_get_wtime() - t0;
  mg->levels = st == FEA_SUCCESS ? calloc((size_t)L, sizeof *mg->levels) : NULL;
  if (st == FEA_SUCCESS && !mg->levels)
    st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d levels", L);
  if (st == FEA_SUCCESS) {
    mg->num_levels = L;
    fea_problem *pb = (fea_problem *)problem;
    fea_object_retain(pb);
    level_set(&mg->levels[0], pb);
  }
  t0 = omp_get_wtime();
  for (int l = 1; l < L && st == FEA_SUCCESS; l++) {
    st = fea_progress_of(ctx, FEA_PROGRESS_MG_HIERARCHY, l - 1, 2 * L - 1);
    fea_problem *pb = NULL;
    if (st == FEA_SUCCESS) st = fea_problem_build(sp[l], &problem->desc, &pb);
    if (st == FEA_SUCCESS) level_set(&mg->levels[l], pb);
  }
  mg->phases.problems += omp_get_wtime() - t0;
  for (int l = 1; l < L; l++) fea_object_release(sp[l]); /* the problems hold theirs */
  FEA_CALL(st);
  const fea_mg_level *last = &mg->levels[L - 1];
  FEA_CHECK(last->n <= FEA_MG_MAX_COARSE_DOFS, ctx, FEA_ERR_UNSUPPORTED,
            "the coarsest B-spline level (%lld x %lld x %lld elements) has %lld free DoFs, more "
            "than the %d a dense coarse solve takes: use element counts with more factors of 2, "
            "or a smaller coarsest_cells (%lld)",
            (long long)last->cells[0], (long long)last->cells[1], (long long)last->cells[2],
            (long long)last->n, FEA_MG_MAX_COARSE_DOFS, (long long)mg->desc.coarsest_cells);
  for (int l = 0; l < L; l++) {
    FEA_CALL(fea_progress_of(ctx, FEA_PROGRESS_MG_HIERARCHY, L - 1 + l, 2 * L - 1));
    fea_mg_level *lv = &mg->levels[l];
    FEA_CALL(alloc_work(mg, lv, l > 0));
    if (l + 1 == L || mg->levels[l + 1].n == 0) continue;
    t0 = omp_get_wtime();
    /* host levels: knot insertion as a Kronecker product, no CSR P */
    if (mg->k->host)
      FEA_CALL(fea_mg_ktransfer_build(ctx, lv->problem, mg->levels[l + 1].problem, &lv->ktrans));
    if (lv->ktrans) {
      lv->grid = 1;
      mg->phases.transfers += omp_get_wtime() - t0;
      continue;
    }
    FEA_CALL(fea_mg_bspline_prolongation(ctx, lv->problem, mg->levels[l + 1].problem, &lv->P));
    FEA_CALL(fea_csr_transpose(ctx, lv->P, &lv->PT));
    FEA_CALL(mg->k->matrix_create(ctx, lv->P, &lv->Pk));
    FEA_CALL(mg->k->matrix_create(ctx, lv->PT, &lv->PTk));
    mg->phases.transfers += omp_get_wtime() - t0;
  }
  return fea_progress(ctx, FEA_PROGRESS_MG_HIERARCHY, 1.0);
}

fea_status fea_mg_hierarchy_build(fea_mg *mg, const fea_problem *problem) {
  fea_context *ctx = mg->ctx;
  mg->bspline = fea_mg_is_bspline(problem);
  if (mg->bspline) return bspline_hierarchy(mg, problem);
  const fea_mesh *m = problem->space->mesh;
  /* Q_p, p > 1: first Q1 on the same mesh (p-multigrid), then the meshes. */
  const int plevel = problem->space->degree[0] > 1;
  const int L = count_levels(m, mg->desc.coarsest_cells) + plevel;
  mg->levels = calloc((size_t)L, sizeof *mg->levels);
  FEA_CHECK(mg->levels, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d levels", L);
  mg->num_levels = L;
  /* Level 0: a reference on the caller's problem, which they may destroy. */
  fea_problem *pb = (fea_problem *)problem;
  fea_object_retain(pb);
  level_set(&mg->levels[0], pb);
  for (int l = 1; l < L; l++) {
    FEA_CALL(fea_progress_of(ctx, FEA_PROGRESS_MG_HIERARCHY, l - 1, 2 * L - 1));
    if (l == 1 && plevel)
      FEA_CALL(order1_problem(mg, mg->levels[0].problem, &pb));
    else
      FEA_CALL(coarse_problem(mg, l, mg->levels[l - 1].problem, &pb));
    level_set(&mg->levels[l], pb);
  }
  const fea_mg_level *last = &mg->levels[L - 1];
  FEA_CHECK(last->n <= FEA_MG_MAX_COARSE_DOFS, ctx, FEA_ERR_UNSUPPORTED,
            "the coarsest level (%lld x %lld x %lld cells) has %lld free DoFs, more than the "
            "%d a dense coarse solve takes: use a mesh whose cell counts have more factors of "
            "2, or a smaller coarsest_cells (%lld)",
            (long long)last->cells[0], (long long)last->cells[1], (long long)last->cells[2],
            (long long)last->n, FEA_MG_MAX_COARSE_DOFS, (long long)mg->desc.coarsest_cells);
  for (int l = 0; l < L; l++) {
    FEA_CALL(fea_progress_of(ctx, FEA_PROGRESS_MG_HIERARCHY, L - 1 + l, 2 * L - 1));
    fea_mg_level *lv = &mg->levels[l];
    FEA_CALL(alloc_work(mg, lv, l > 0));
    if (l + 1 == L || mg->levels[l + 1].n == 0) continue;
    const double t0 = omp_get_wtime();
    /* Grid sweeps are host loops; elsewhere the transfers are CSR products. */
    const int ptransfer = l == 0 && plevel;
    lv->grid = !ptransfer && mg->k->host &&
               fea_mg_grid_transfer_applies(lv->problem, mg->levels[l + 1].problem);
    /* The p-transfer by sweeps where both levels are grids of free nodes. */
    if (ptransfer && mg->k->host)
      FEA_CALL(fea_mg_pgrid_build(ctx, lv->problem, mg->levels[1].problem, &lv->pgrid));
    if (lv->pgrid) {
      lv->grid = 1;
    } else if (ptransfer) {
      FEA_CALL(fea_mg_p_prolongation(ctx, lv->problem, mg->levels[1].problem, &lv->P));
      FEA_CALL(fea_csr_transpose(ctx, lv->P, &lv->PT));
      FEA_CALL(mg->k->matrix_create(ctx, lv->P, &lv->Pk));
      FEA_CALL(mg->k->matrix_create(ctx, lv->PT, &lv->PTk));
    } else if (!lv->grid) {
      FEA_CALL(fea_mg_prolongation(ctx, lv->problem, mg->levels[l + 1].problem, &lv->P));
      FEA_CALL(fea_csr_transpose(ctx, lv->P, &lv->PT));
      FEA_CALL(mg->k->matrix_create(ctx, lv->P, &lv->Pk));
      FEA_CALL(mg->k->matrix_create(ctx, lv->PT, &lv->PTk));
    }
    mg->phases.transfers += omp_get_wtime() - t0;
  }
  return fea_progress(ctx, FEA_PROGRESS_MG_HIERARCHY, 1.0);
}

void fea_mg_hierarchy_free(fea_mg *mg) {
  for (int l = 0; l < mg->num_levels; l++) {
    fea_mg_level *lv = &mg->levels[l];
    const fea_mg_kernels *k = mg->k;
    FEA_OBJECT_DROP(lv->op);
    if (lv->Pk) k->matrix_destroy(mg->ctx, lv->Pk);
    if (lv->PTk) k->matrix_destroy(mg->ctx, lv->PTk);
    FEA_OBJECT_DROP(lv->P);
    FEA_OBJECT_DROP(lv->PT);
    FEA_OBJECT_DROP(lv->problem);
    fea_mg_schwarz_free(lv->schwarz);
    lv->schwarz = NULL;
    fea_mg_blocks_free(lv->blocks);
    lv->blocks = NULL;
    fea_mg_pgrid_free(lv->pgrid);
    lv->pgrid = NULL;
    fea_mg_ktransfer_free(lv->ktrans);
    lv->ktrans = NULL;
    double *arrays[] = {lv->dinv, lv->b, lv->x, lv->r, lv->w};
    for (int i = 0; i < 5; i++)
      if (arrays[i]) k->release(mg->ctx, arrays[i]);
  }
  free(mg->levels);
  mg->levels = NULL;
  mg->num_levels = 0;
}
