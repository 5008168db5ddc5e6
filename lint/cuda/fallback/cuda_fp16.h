// collcheck-lint CUDA fallback: half precision types are opaque to the lint.
#pragma once
struct __half {
  unsigned short bits;
};
