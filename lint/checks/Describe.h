// Wording shared by the checks: how a reducer averages, where a count came from.
#pragma once

#include "engine/Check.h"

#include <string>

namespace collcheck::lint {

// "ncclAllReduce with ncclAvg", "MPI_Allreduce with MPI_SUM then a division by the communicator
// size", or the outermost wrapper when the reducer sits behind one.
std::string describeAveraging(const ReductionEvent &event);
// The reducer itself, without the wrappers in front of it (what a summary of a wrapper says).
std::string describeReducer(const ReductionEvent &event);

// The notes that walk through wrappers and end at the reducer (and its division by P).
void addAveragingNotes(const ReductionEvent &event, Finding &finding);

// A note at `origin`, when it has a location.
void addNote(Finding &finding, const Origin &origin, std::string message);

// The divisor of the division an origin points at, quoted ("'l.size()'"), else its subject.
std::string divisorText(const Origin &origin, const clang::ASTContext &context);

} // namespace collcheck::lint
