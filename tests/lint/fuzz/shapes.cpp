// Seed of the mutation run (mutate_corpus.py): shapes of real training and MPI code that the
// corpus snippets do not have, in one light file: function templates written by macros, CRTP,
// variadic templates and fold expressions, generic lambdas and std::function, dependent calls and
// constructions, error-check macros that exit, and (parsed as CUDA) kernel templates and their
// launches. It compiles as C++ and as CUDA host code; the mutants mostly do not.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <utility>
#include <vector>

#define CHECK_MPI(call)                                                                            \
  do {                                                                                             \
    int status_ = (call);                                                                          \
    if (status_ != MPI_SUCCESS) {                                                                  \
      std::fprintf(stderr, "MPI error %d at %s:%d\n", status_, __FILE__, __LINE__);                \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

template <typename T> struct Layer {
  virtual ~Layer() = default;
  virtual T forward(T x) = 0;
};

template <typename T> struct Scale : Layer<T> {
  explicit Scale(T s) : s_(s) {}
  T forward(T x) override { return x * s_; }
  T s_;
};

template <typename T> struct Shift : Layer<T> {
  Shift(T a, T b) : a_(a + b) {}
  T forward(T x) override { return x + a_; }
  T a_;
};

#define DEFINE_CREATOR(type)                                                                       \
  template <typename T> Layer<T> *create_##type(T p) { return new type<T>(p); }
DEFINE_CREATOR(Scale)

template <typename T> Layer<T> *create_shift(T p) { return new Shift<T>(p, p); }

template <typename Derived> struct Reducer {
  void reduce(double *g, int n, MPI_Comm c) { static_cast<Derived *>(this)->apply(g, n, c); }
};

struct SumReducer : Reducer<SumReducer> {
  void apply(double *g, int n, MPI_Comm c) {
    CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, g, n, MPI_DOUBLE, MPI_SUM, c));
  }
};

template <typename... Ts> auto total(Ts... xs) { return (xs + ... + 0); }

template <typename C> double mean_of(const C &c, MPI_Comm comm) {
  typename C::value_type s{};
  for (const auto &x : c)
    s += x;
  double m = s / c.size();
  double g = 0;
  MPI_Allreduce(&m, &g, 1, MPI_DOUBLE, MPI_SUM, comm);
  int size = 1;
  MPI_Comm_size(comm, &size);
  return g / size;
}

template <typename T, int N> struct Buffer {
  T data[N];
  template <typename F> void each(F &&f) {
    for (auto &x : data)
      f(x);
  }
};

template <typename Model> void dependent_calls(Model &model, MPI_Comm comm) {
  auto params = model.parameters();
  for (auto &p : params)
    p.grad().div_(model.world());
  Model copy(model, comm);
  auto weights = Model::create(comm)->weights();
  MPI_Bcast(weights.data(), static_cast<int>(weights.size()), MPI_FLOAT, 0, comm);
  typename Model::Optimizer opt{copy, 0.1};
  opt.step();
}

#ifdef __CUDACC__
template <typename T> __global__ void scale_kernel(T *x, int n, T s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= s;
}

template <typename T> void launch_scale(T *x, int n, T s, cudaStream_t stream) {
  scale_kernel<T><<<(n + 255) / 256, 256, 0, stream>>>(x, n, s);
}
#endif

void lambdas(std::vector<double> &v, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  auto sync = [&](auto &buf) {
    MPI_Allreduce(MPI_IN_PLACE, buf.data(), static_cast<int>(buf.size()), MPI_DOUBLE, MPI_SUM,
                  comm);
  };
  std::function<void()> later = [&] { sync(v); };
  later();
  Buffer<double, 4> b{};
  b.each([&](double &x) { x /= (rank + 1); });
  Layer<double> *layer = create_Scale<double>(2.0);
  v[0] = layer->forward(v[0]);
  delete layer;
  SumReducer r;
  r.reduce(v.data(), static_cast<int>(v.size()), comm);
  v[0] += total(1, 2.0, 3u);
  auto [lo, hi] = std::make_pair(v.front(), v.back());
  v[1] = lo + hi;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  std::vector<double> v(8, 1.0);
  lambdas(v, MPI_COMM_WORLD);
  v[1] = mean_of(v, MPI_COMM_WORLD);
  delete create_shift<float>(1.0f);
  MPI_Finalize();
  return 0;
}
