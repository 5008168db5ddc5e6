// The training loop: plain SGD on loss 1/2 (w - y)^2 per valid item, whose per-item gradient is
// w - y. The intended update is the global item mean g = (1/N) sum_r n_r mean_r, N = sum_r n_r;
// the options choose how close a distributed run comes to it.
#pragma once

#include "collectives.h"
#include "options.h"
#include "watchdog.h"

#include <string>
#include <vector>

namespace collcheck::example {

// "update 3 w 9.75" (components separated by spaces), with " skipped" when no item was valid.
std::string formatUpdate(int update, const std::vector<double> &weights, bool skipped);

// Runs the configured distributed training; prints on this rank when `print` is set.
void trainDistributed(const Options &options, Collectives &collectives, Watchdog &watchdog,
                      bool print);

// One process over the union of every rank's data: the objective the distributed run intends.
// With `collectives` (one rank, --reference-allreduce) each update's gradient also goes through
// its all-reduce, so that a traced run records the reduced values.
void trainReference(const Options &options, Collectives *collectives);

} // namespace collcheck::example
