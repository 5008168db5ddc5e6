// Templates the file never instantiates (helpers instantiated by other files, or not yet): they
// are walked as written, calls with arguments of dependent type taken for the one function their
// name found, `x.size()` of a dependent container for its element count.
// Functions named tp_* must produce exactly the diagnostics marked `expect:`, tn_* none.
#include <mpi.h>

#include <vector>

template <typename T> MPI_Datatype mpi_type_of();
template <> MPI_Datatype mpi_type_of<float>() { return MPI_FLOAT; }
template <> MPI_Datatype mpi_type_of<double>() { return MPI_DOUBLE; }

template <typename T>
void tp_template_rank_guard(std::vector<T> &grads, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0)
    MPI_Allreduce(MPI_IN_PLACE, grads.data(), static_cast<int>(grads.size()), mpi_type_of<T>(), MPI_SUM, comm); // expect: collective-not-reached-by-all-ranks
}

template <typename T>
void tn_template_size_guard(std::vector<T> &grads, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  if (size > 1)
    MPI_Allreduce(MPI_IN_PLACE, grads.data(), static_cast<int>(grads.size()), mpi_type_of<T>(), MPI_SUM, comm);
}

template <typename T>
T tp_template_local_mean(const std::vector<T> &losses, MPI_Comm comm) {
  T sum = 0;
  for (const T &l : losses)
    sum += l;
  T mean = sum / losses.size();
  T total = 0;
  MPI_Allreduce(&mean, &total, 1, mpi_type_of<T>(), MPI_SUM, comm); // expect: uncompensated-mean
  int size = 1;
  MPI_Comm_size(comm, &size);
  return total / size;
}

template <typename T>
T tn_template_global_mean(const std::vector<T> &losses, MPI_Comm comm) {
  T local[2] = {0, static_cast<T>(losses.size())};
  for (const T &l : losses)
    local[0] += l;
  MPI_Allreduce(MPI_IN_PLACE, local, 2, mpi_type_of<T>(), MPI_SUM, comm);
  return local[1] > 0 ? local[0] / local[1] : T{0};
}

template <typename Buffer> class Averager {
public:
  explicit Averager(MPI_Comm comm) : comm_(comm) {}
  void tp_method_of_class_template(Buffer &buffer);
  void tn_method_of_class_template(Buffer &buffer);

private:
  MPI_Comm comm_;
};

template <typename Buffer> void Averager<Buffer>::tp_method_of_class_template(Buffer &buffer) {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  if (rank != 0)
    return;
  MPI_Allreduce(MPI_IN_PLACE, buffer.data(), static_cast<int>(buffer.size()), MPI_FLOAT, MPI_SUM, comm_); // expect: collective-not-reached-by-all-ranks
}

template <typename Buffer> void Averager<Buffer>::tn_method_of_class_template(Buffer &buffer) {
  MPI_Allreduce(MPI_IN_PLACE, buffer.data(), static_cast<int>(buffer.size()), MPI_FLOAT, MPI_SUM, comm_);
}

// Function templates written by a macro, as layer registries do: in the template as written,
// `new type<T>(p)` and `T x(a, b)` hold argument lists that have no type yet. Nothing to report,
// and every function is analysed.
template <typename T> struct Layer {
  virtual ~Layer() = default;
};
template <typename T> struct Dense : Layer<T> {
  explicit Dense(int width) : width_(width) {}
  int width_;
};
template <typename T> struct Pool : Layer<T> {
  Pool(int window, int stride) : window_(window * stride) {}
  int window_;
};
#define REGISTER_LAYER(type)                                                                       \
  template <typename T> Layer<T> *tn_create_##type(int p) { return new type<T>(p); }
REGISTER_LAYER(Dense)

template <typename T> Layer<T> *tn_create_pool(int p) { return new Pool<T>(p, p); }

template <typename T, typename U> T tn_dependent_initialisers(U a, int n, MPI_Comm comm) {
  T x(a, n);
  T y{a, n};
  auto z = T(a, n) + x;
  MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_INT, MPI_SUM, comm);
  return z + y;
}

Layer<float> *tn_instantiate_the_macro_template(int width) {
  return tn_create_Dense<float>(width);
}
