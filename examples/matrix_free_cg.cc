// matrix_free_cg: a 3D Q2 Poisson solve with the matrix-free operator and
// Jacobi-preconditioned CG, from C++.
//
//   -Laplace u = f on the unit cube, u = 0 on its boundary,
//   u = sin(pi x) sin(pi y) sin(pi z), so the L2 error is known.
//
// Usage: matrix_free_cg [n] [threads]   (n cells per direction, default 16)
// Prints the operator's kernel, the CG iterations, the L2 error and the
// operator's throughput in DoF/s (free DoFs times applications per second).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <feaccel.h>

namespace {

const double pi = 3.14159265358979323846;

void check(fea_status s, const fea_context *ctx, const char *what) {
  if (s < 0)  // warnings (> 0) are outcomes, reported by the caller
    throw std::runtime_error(std::string(what) + ": " + fea_status_string(s) + ": " +
                             fea_context_last_error(ctx));
}

// RAII owners: the destroy functions take the handle's address.
template <typename T, fea_status (*Destroy)(T **)>
struct Deleter {
  void operator()(T *h) const { (void)Destroy(&h); }
};
using Context = std::unique_ptr<fea_context, Deleter<fea_context, fea_context_destroy>>;
using Mesh = std::unique_ptr<fea_mesh, Deleter<fea_mesh, fea_mesh_destroy>>;
using Space = std::unique_ptr<fea_space, Deleter<fea_space, fea_space_destroy>>;
using Problem = std::unique_ptr<fea_problem, Deleter<fea_problem, fea_problem_destroy>>;
using Operator = std::unique_ptr<fea_operator, Deleter<fea_operator, fea_operator_destroy>>;
using Vector = std::unique_ptr<fea_vector, Deleter<fea_vector, fea_vector_destroy>>;

double exact(const double *x, void *) {
  return std::sin(pi * x[0]) * std::sin(pi * x[1]) * std::sin(pi * x[2]);
}
double source(const double *x, void *user) { return 3.0 * pi * pi * exact(x, user); }

}  // namespace

int main(int argc, char **argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 16;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 0;
  fea_context *ctx_raw = nullptr;
  try {
    check(fea_context_create(nullptr, &ctx_raw), nullptr, "context");
    Context ctx(ctx_raw);
    if (threads > 0) check(fea_context_set_num_threads(ctx.get(), threads), ctx.get(), "threads");

    fea_mesh_desc md = FEA_MESH_DESC_INIT;
    md.dim = 3;
    md.n[0] = md.n[1] = md.n[2] = n;
    fea_mesh *mesh = nullptr;
    check(fea_mesh_create_structured(ctx.get(), &md, &mesh), ctx.get(), "mesh");
    Mesh mesh_owner(mesh);
    fea_space *space = nullptr;
    check(fea_space_create_lagrange(mesh, 2, FEA_NODES_EQUISPACED, &space), ctx.get(), "space");
    Space space_owner(space);
    fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
    pd.source = source;
    fea_problem *pb = nullptr;
    check(fea_problem_create_poisson(space, &pd, &pb), ctx.get(), "problem");
    Problem pb_owner(pb);

    // Matrix-free (sum factorization where the space allows, else element matrices).
    fea_operator_desc od = FEA_OPERATOR_DESC_INIT;
    fea_operator *op = nullptr;
    check(fea_operator_create(ctx.get(), pb, &od, &op), ctx.get(), "operator");
    Operator op_owner(op);
    fea_operator_info info = FEA_OPERATOR_INFO_INIT;
    check(fea_operator_get_info(op, &info), ctx.get(), "info");

    fea_index nf = 0;
    check(fea_problem_get_num_free_dofs(pb, &nf), ctx.get(), "free DoFs");
    fea_vector *b = nullptr, *x = nullptr;
    check(fea_vector_create(ctx.get(), nf, FEA_F64, &b), ctx.get(), "b");
    Vector b_owner(b);
    check(fea_vector_create(ctx.get(), nf, FEA_F64, &x), ctx.get(), "x");
    Vector x_owner(x);
    check(fea_operator_get_rhs(op, b), ctx.get(), "rhs");

    fea_cg_desc cd = FEA_CG_DESC_INIT;
    cd.rtol = 1e-10;
    fea_cg_stats cs = FEA_CG_STATS_INIT;
    fea_status st = fea_cg_solve(op, b, x, &cd, &cs);
    check(st, ctx.get(), "cg");

    std::vector<double> u_free(static_cast<size_t>(nf));
    check(fea_vector_read(x, nf, FEA_F64, u_free.data()), ctx.get(), "read");
    fea_space_info si = FEA_SPACE_INFO_INIT;
    check(fea_space_get_info(space, &si), ctx.get(), "space info");
    std::vector<double> u(static_cast<size_t>(si.num_dofs));
    check(fea_problem_expand_solution(pb, u_free.data(), u.data()), ctx.get(), "expand");
    double l2 = 0.0;
    check(fea_problem_error_norms(pb, u.data(), exact, nullptr, nullptr, &l2, nullptr), ctx.get(),
          "error");

    const double applies = static_cast<double>(cs.iterations + 1);
    int nthreads = 0;
    check(fea_context_get_num_threads(ctx.get(), &nthreads), ctx.get(), "threads");
    std::printf("3D Q2, %ld^3 cells, %lld free DoFs, %d threads\n", n, static_cast<long long>(nf),
                nthreads);
    std::printf("operator:   %s (strategy %s), setup %.3f s, %.1f MB\n", info.kernel,
                fea_update_strategy_name(info.strategy_run), info.setup_s,
                static_cast<double>(info.memory_bytes) / 1e6);
    std::printf("PCG:        %lld iterations, %s, relative residual %.2e, %.3f s\n",
                static_cast<long long>(cs.iterations),
                st == FEA_SUCCESS ? "converged" : "NOT converged",
                cs.final_residual / cs.initial_residual, cs.solve_s);
    std::printf("L2 error:   %.3e\n", l2);
    std::printf("throughput: %.3e DoF/s in operator applications\n",
                cs.apply_s > 0 ? static_cast<double>(nf) * applies / cs.apply_s : 0.0);
    return st == FEA_SUCCESS ? 0 : 2;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "matrix_free_cg: %s\n", e.what());
    return 1;
  }
}
