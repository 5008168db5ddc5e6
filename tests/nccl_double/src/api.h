// The implementations behind the exported entry points, one per row of api_table.h. They call
// each other directly, never through the exported names, so that an interposing tracer sees each
// application call once.
#pragma once

#include <nccl.h>

namespace collcheck::nccl_double {

#define NCCL_DOUBLE_API(Return, Name, Parameters, Arguments) Return Name Parameters;
#include "tests/nccl_double/src/api_table.h"
#undef NCCL_DOUBLE_API

} // namespace collcheck::nccl_double
