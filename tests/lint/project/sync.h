// A small project whose reducers, size query and local mean live in other files than the
// training step that misuses them (train.cpp). Each function below is defined once, in sync.cpp
// or loss.cpp; train.cpp sees only these declarations.
#pragma once
#include <mpi.h>

// The average over the ranks: a sum, then a division by the communicator size.
float sync_mean(float value, MPI_Comm comm);
// The same, in place, element by element.
void average_in_place(float *values, int n, MPI_Comm comm);
// The sum over the ranks, undivided.
float global_sum(float value, MPI_Comm comm);
int world_size(MPI_Comm comm);
int world_rank(MPI_Comm comm);
// Synchronises every rank.
void sync_all(MPI_Comm comm);
// Prints the message and ends the process.
void fatal(const char *message);

class Loss {
public:
  virtual ~Loss() = default;
  // The loss of this rank's valid items.
  virtual float compute(const float *loss, const bool *valid, int n) const = 0;
};

// A metric with a default body, which a subclass of another file replaces.
class Metric {
public:
  virtual ~Metric() = default;
  virtual float of(const float *loss, const bool *valid, int n) const { return 0; }
};

class MaskedMean : public Metric {
public:
  float of(const float *loss, const bool *valid, int n) const override;
};

class MaskedLoss : public Loss {
public:
  float compute(const float *loss, const bool *valid, int n) const override;
};

// The node-local and cross-node communicators of a hierarchical all-reduce, and this rank's place
// on its node; init (sync.cpp) builds them.
struct Nodes {
  MPI_Comm local_comm;
  MPI_Comm cross_comm;
  int local_rank = 0;
  void init(MPI_Comm world);
};

// A model's starting score, as each objective computes it from this rank's labels: a base with a
// body and overrides in loss.cpp, one of which returns a value of no known kind (a median).
class Objective {
public:
  virtual ~Objective() = default;
  void init(const float *labels, const float *weights, int num_items) {
    labels_ = labels;
    weights_ = weights;
    num_items_ = num_items;
  }
  virtual double start_score() const { return 0; }

protected:
  const float *labels_ = nullptr;
  const float *weights_ = nullptr;
  int num_items_ = 0;
};

class SquaredError : public Objective {
public:
  double start_score() const override;
};

class AbsoluteError : public Objective {
public:
  double start_score() const override;
};
