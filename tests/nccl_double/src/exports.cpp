// The exported symbols: `ncclX` (weak, as NCCL defines it) and its alias `pncclX`, generated
// from api_table.h. Nothing else leaves the library (exports.map).
#include "tests/nccl_double/src/api.h"

#define NCCL_DOUBLE_API(Return, Name, Parameters, Arguments)                                       \
  extern "C" __attribute__((visibility("default"), weak)) Return nccl##Name Parameters {           \
    return collcheck::nccl_double::Name Arguments;                                                 \
  }                                                                                                \
  extern "C" __attribute__((visibility("default"), alias("nccl" #Name)))                           \
  Return pnccl##Name Parameters;
#include "tests/nccl_double/src/api_table.h"
#undef NCCL_DOUBLE_API

// What `strings libnccl.so.2` shows: this library is not NVIDIA's.
extern "C" __attribute__((visibility("default"), used)) const char collcheckNcclDoubleIdentity[] =
    "collcheck NCCL test double " COLLCHECK_VERSION " (host memory over PMPI; not NVIDIA NCCL, "
    "never installed)";
