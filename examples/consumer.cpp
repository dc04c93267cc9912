// consumer: libfeaccel from C++. RAII owners around the C handles; the
// headers need no extern "C" from the user.
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <feaccel.h>

namespace {

void check(fea_status s, const fea_context *ctx, const char *what) {
  if (s != FEA_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + fea_status_string(s) + ": " +
                             fea_context_last_error(ctx));
}

struct ContextDeleter {
  void operator()(fea_context *c) const { fea_context_destroy(&c); }
};
struct VectorDeleter {
  void operator()(fea_vector *v) const { fea_vector_destroy(&v); }
};
using Context = std::unique_ptr<fea_context, ContextDeleter>;
using Vector = std::unique_ptr<fea_vector, VectorDeleter>;

Vector make_vector(fea_context *ctx, const std::vector<double> &values, fea_precision prec) {
  fea_vector *v = nullptr;
  check(fea_vector_create(ctx, static_cast<fea_index>(values.size()), prec, &v), ctx, "create");
  Vector owned(v);
  check(fea_vector_write(v, static_cast<fea_index>(values.size()), FEA_F64, values.data()), ctx,
        "write");
  return owned;
}

}  // namespace

int main(int argc, char **argv) {
  try {
    fea_context *raw = nullptr;
    check(fea_context_create(argc > 1 ? argv[1] : "/cpu/ref", &raw), nullptr, "context");
    Context ctx(raw);
    // y = 2 x + y in single precision, then back to double on the host.
    Vector x = make_vector(ctx.get(), {1, 2, 3, 4}, FEA_F32);
    Vector y = make_vector(ctx.get(), {10, 20, 30, 40}, FEA_F32);
    check(fea_vector_axpy(y.get(), 2.0, x.get()), ctx.get(), "axpy");
    std::vector<double> out(4);
    check(fea_vector_read(y.get(), 4, FEA_F64, out.data()), ctx.get(), "read");
    std::printf("y = %g %g %g %g\n", out[0], out[1], out[2], out[3]);
    return out[3] == 48.0 ? 0 : 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
}
