// libcollcheck_mpi.so: the only part of the analyzer that links MPI. transport.cpp loads it when
// collcheck runs as an MPI job; see mpi_plugin_abi.h for the interface.
#include "launcher_environment.h"
#include "mpi_plugin_abi.h"

// The C API only: from C++, mpi.h also declares the deprecated C++ bindings, which would need
// libmpi_cxx (Open MPI) that MPI::MPI_C does not link.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <dirent.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#define COLLCHECK_MPI_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr uint64_t kDefaultPieceBytes = uint64_t{1} << 30;
constexpr int kGatherTag = 0xcc;

// A private communicator, so that our messages never meet anyone else's, with errors returned
// rather than fatal.
MPI_Comm comm = MPI_COMM_NULL;
int myRank = 0;
int worldSize = 1;
uint64_t pieceBytes = kDefaultPieceBytes;
bool weInitialized = false;
char lastError[MPI_MAX_ERROR_STRING + 256] = "no error";
MPI_Request barrier = MPI_REQUEST_NULL;

// Point-to-point messages on their way, each with its own copy of the bytes. A range handed over
// for thousands of files is past every eager limit: a blocking send would hold the giver until
// the asker, still reading its own last chunks, posts the receive.
struct Outgoing {
  MPI_Request request = MPI_REQUEST_NULL;
  std::unique_ptr<char[]> bytes;
};
std::vector<Outgoing> outgoing;

// Forgets the sends that have completed; the others stay.
int retireSent() {
  for (size_t i = 0; i < outgoing.size();) {
    int done = 0;
    int rc = MPI_Test(&outgoing[i].request, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
      return rc;
    if (done) {
      outgoing[i] = std::move(outgoing.back());
      outgoing.pop_back();
    } else {
      ++i;
    }
  }
  return MPI_SUCCESS;
}

int fail(const char *what, int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    std::snprintf(text, sizeof text, "MPI error %d", code);
  std::snprintf(lastError, sizeof lastError, "%s: %s", what, text);
  return code;
}

int failWith(int code, const char *message) {
  std::snprintf(lastError, sizeof lastError, "%s", message);
  return code;
}

// MPI counts are ints, so messages travel in pieces; COLLCHECK_MPI_PIECE_BYTES makes them small
// enough to test the splitting without gigabytes.
uint64_t configuredPieceBytes() {
  const char *text = std::getenv("COLLCHECK_MPI_PIECE_BYTES");
  if (!text || !*text)
    return kDefaultPieceBytes;
  char *end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (*end != '\0' || value == 0 || value > static_cast<unsigned long long>(INT_MAX))
    return kDefaultPieceBytes;
  return value;
}

// transport.cpp loads us RTLD_LOCAL, so libmpi lands in a private scope; Open MPI's components,
// which it dlopens itself, then cannot resolve libmpi's symbols. Promoting the already loaded
// libmpi (found through one of its functions) to the global scope fixes that, whatever its
// soname.
void makeMpiGlobal() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void *>(&MPI_Init), &info) != 0 && info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD); // kept for the process's life
}

// Open MPI's PMIx client talks to its local server (mpirun, orted) over loopback TCP without
// TCP_NODELAY. MPI_Finalize sends it a few small messages in a row and waits for the reply: by
// Nagle's rule each one after the first waits for the acknowledgement of the one before, which
// the server delays (40 ms on Linux). Measured, that was 0.045 s of every split analysis. The
// analyzer opens no socket of its own, so every TCP socket of this process is MPI's; for them
// the option only means that small messages leave at once.
void sendSmallMessagesAtOnce() {
  DIR *fds = opendir("/proc/self/fd");
  if (!fds)
    return;
  const int self = dirfd(fds);
  while (dirent *entry = readdir(fds)) {
    char *end = nullptr;
    long fd = std::strtol(entry->d_name, &end, 10);
    if (*end != '\0' || end == entry->d_name || fd == self)
      continue;
    int domain = 0, type = 0;
    socklen_t length = sizeof domain;
    if (getsockopt(static_cast<int>(fd), SOL_SOCKET, SO_DOMAIN, &domain, &length) != 0 ||
        (domain != AF_INET && domain != AF_INET6))
      continue;
    length = sizeof type;
    if (getsockopt(static_cast<int>(fd), SOL_SOCKET, SO_TYPE, &type, &length) != 0 ||
        type != SOCK_STREAM)
      continue;
    int on = 1;
    setsockopt(static_cast<int>(fd), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  }
  closedir(fds);
}

// Open MPI chooses its point-to-point layer by opening every candidate, and the one for matching
// transports (pml cm) probes the fabrics' libraries: with Debian's Open MPI (whose parameter file
// already excludes UCX's pml and the OFI transport) the PSM and PSM2 probes are most of what
// MPI_Init costs. Measured on one node (2 processes), MPI_Init took 0.23 s of wall and 0.028 s of
// CPU, and 0.028 s and 0.014 s with the shared-memory path (pml ob1, which opens no fabric); in a
// split of 4,096 files the MPI thread then used 0.018-0.032 s of CPU instead of 0.031-0.048 s,
// CPU a process still reading pays for.
// The analyzer's traffic is a few small messages and one gather: when every process of the job
// is on this node (Open MPI says so in its environment) shared memory is all it needs. Across
// nodes the fabric is left to Open MPI, and a pml the user set in the environment (`mpirun
// --mca pml ...`, OMPI_MCA_pml) wins; one set only in a parameter file is overridden here.
void preferSharedMemoryOnOneNode() {
  using collcheck::analyzer::distributed::launcherCount;
  const long size = launcherCount("OMPI_COMM_WORLD_SIZE");
  if (size > 1 && launcherCount("OMPI_COMM_WORLD_LOCAL_SIZE") == size)
    setenv("OMPI_MCA_pml", "ob1", 0);
}

int notConnected() { return failWith(MPI_ERR_OTHER, "collcheck_mpi_init was not called"); }

// The sender's pieces follow its parts (each part cut every pieceBytes), so a piece may be
// shorter than what is left to receive; non-overtaking keeps them in order.
int receivePieces(char *buffer, uint64_t bytes, int source) {
  for (uint64_t offset = 0; offset < bytes;) {
    int count = static_cast<int>(std::min(pieceBytes, bytes - offset));
    MPI_Status status;
    int rc = MPI_Recv(buffer + offset, count, MPI_BYTE, source, kGatherTag, comm, &status);
    if (rc != MPI_SUCCESS)
      return fail("MPI_Recv", rc);
    int received = 0;
    MPI_Get_count(&status, MPI_BYTE, &received);
    if (received <= 0 || received > count)
      return failWith(MPI_ERR_TRUNCATE, "gather: a piece arrived empty or longer than announced");
    offset += static_cast<uint64_t>(received);
  }
  return MPI_SUCCESS;
}

int sendPieces(const char *data, uint64_t bytes) {
  for (uint64_t offset = 0; offset < bytes; offset += pieceBytes) {
    int count = static_cast<int>(std::min(pieceBytes, bytes - offset));
    int rc = MPI_Send(data + offset, count, MPI_BYTE, 0, kGatherTag, comm);
    if (rc != MPI_SUCCESS)
      return fail("MPI_Send", rc);
  }
  return MPI_SUCCESS;
}

} // namespace

COLLCHECK_MPI_EXPORT int collcheck_mpi_abi_version(void) { return COLLCHECK_MPI_ABI_VERSION; }

COLLCHECK_MPI_EXPORT int collcheck_mpi_init(void) {
  if (comm != MPI_COMM_NULL)
    return MPI_SUCCESS;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    return failWith(MPI_ERR_OTHER, "MPI was already finalized in this process");
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    makeMpiGlobal();
    // Waiting in MPI (the start, the gather) is the analysis's idle time: on a node whose cores
    // all analyze, Open MPI's busy polling would take one from a process still reading. The
    // user's own setting wins.
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
    preferSharedMemoryOnOneNode();
    // Serialized: the analyzer is multithreaded, but one thread at a time talks to MPI.
    int provided = 0;
    int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    if (rc != MPI_SUCCESS)
      return fail("MPI_Init_thread", rc);
    weInitialized = true;
  }
  int rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  if (rc != MPI_SUCCESS)
    return fail("MPI_Comm_dup", rc);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm, &myRank);
  MPI_Comm_size(comm, &worldSize);
  // Sender and receiver must cut the same pieces, so rank 0's setting holds for everyone.
  pieceBytes = configuredPieceBytes();
  rc = MPI_Bcast(&pieceBytes, 1, MPI_UINT64_T, 0, comm);
  if (rc != MPI_SUCCESS)
    return fail("MPI_Bcast (piece size)", rc);
  return MPI_SUCCESS;
}

COLLCHECK_MPI_EXPORT int collcheck_mpi_rank(void) { return myRank; }

COLLCHECK_MPI_EXPORT int collcheck_mpi_size(void) { return worldSize; }

COLLCHECK_MPI_EXPORT int collcheck_mpi_gather(const collcheck_mpi_part *parts, uint64_t count,
                                              collcheck_mpi_place_fn place, void *ctx) {
  if (comm == MPI_COMM_NULL)
    return notConnected();
  uint64_t bytes = 0;
  for (uint64_t i = 0; i < count; ++i)
    bytes += parts[i].bytes;
  // Lengths first: they may exceed what one MPI count can say, and the root must size buffers.
  std::vector<uint64_t> lengths;
  try {
    lengths.resize(myRank == 0 ? worldSize : 0);
  } catch (const std::bad_alloc &) {
    return failWith(MPI_ERR_NO_MEM, "gather: out of memory for the lengths");
  }
  int rc = MPI_Gather(&bytes, 1, MPI_UINT64_T, lengths.data(), 1, MPI_UINT64_T, 0, comm);
  if (rc != MPI_SUCCESS)
    return fail("MPI_Gather (lengths)", rc);
  if (myRank != 0) {
    for (uint64_t i = 0; i < count && rc == MPI_SUCCESS; ++i)
      rc = sendPieces(static_cast<const char *>(parts[i].data), parts[i].bytes);
    return rc;
  }

  // One source at a time, in rank order: the others wait in MPI_Send until their turn.
  for (int source = 0; source < worldSize; ++source) {
    uint64_t length = lengths[source];
    auto *buffer = static_cast<char *>(place(ctx, source, length));
    if (length > 0 && !buffer) {
      std::snprintf(lastError, sizeof lastError,
                    "gather: cannot allocate %llu bytes for rank %d's part",
                    static_cast<unsigned long long>(length), source);
      return MPI_ERR_NO_MEM;
    }
    if (source == 0) { // our own parts need no message (a send to ourselves would block)
      for (uint64_t i = 0, at = 0; i < count; at += parts[i].bytes, ++i)
        if (parts[i].bytes > 0)
          std::memcpy(buffer + at, parts[i].data, parts[i].bytes);
      continue;
    }
    rc = receivePieces(buffer, length, source);
    if (rc != MPI_SUCCESS)
      return rc;
  }
  return MPI_SUCCESS;
}

COLLCHECK_MPI_EXPORT int collcheck_mpi_broadcast(int64_t *value) {
  if (comm == MPI_COMM_NULL)
    return notConnected();
  int rc = MPI_Bcast(value, 1, MPI_INT64_T, 0, comm);
  return rc == MPI_SUCCESS ? rc : fail("MPI_Bcast", rc);
}

COLLCHECK_MPI_EXPORT int collcheck_mpi_send(int dest, int tag, const void *data, uint64_t bytes) {
  if (comm == MPI_COMM_NULL)
    return notConnected();
  if (bytes > static_cast<uint64_t>(INT_MAX))
    return failWith(MPI_ERR_COUNT, "send: the message is too long for one piece");
  int rc = retireSent();
  if (rc != MPI_SUCCESS)
    return fail("MPI_Test (send)", rc);
  Outgoing message;
  message.bytes.reset(new (std::nothrow) char[std::max<uint64_t>(bytes, 1)]);
  if (!message.bytes)
    return failWith(MPI_ERR_NO_MEM, "send: no memory for the message");
  if (bytes > 0)
    std::memcpy(message.bytes.get(), data, bytes);
  rc = MPI_Isend(message.bytes.get(), static_cast<int>(bytes), MPI_BYTE, dest, tag, comm,
                 &message.request);
  if (rc != MPI_SUCCESS)
    return fail("MPI_Isend", rc);
  outgoing.push_back(std::move(message));
  return MPI_SUCCESS;
}

COLLCHECK_MPI_EXPORT int collcheck_mpi_probe(int tag, int *found, int *source, uint64_t *bytes) {
  if (comm == MPI_COMM_NULL)
    return notConnected();
  int rc = retireSent();
  if (rc != MPI_SUCCESS)
    return fail("MPI_Test (send)", rc);
  MPI_Status status;
  rc = MPI_Iprobe(MPI_ANY_SOURCE, tag, comm, found, &status);
  if (rc != MPI_SUCCESS)
    return fail("MPI_Iprobe", rc);
  if (*found) {
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    *source = status.MPI_SOURCE;
    *bytes = static_cast<uint64_t>(std::max(count, 0));
  }
  return MPI_SUCCESS;
}

COLLCHECK_MPI_EXPORT int collcheck_mpi_receive(int source, int tag, void *data, uint64_t bytes) {
  if (comm == MPI_COMM_NULL)
    return notConnected();
  if (bytes > static_cast<uint64_t>(INT_MAX))
    return failWith(MPI_ERR_COUNT, "receive: the message is too long for one piece");
  int rc = MPI_Recv(data, static_cast<int>(bytes), MPI_BYTE, source, tag, comm, MPI_STATUS_IGNORE);
  return rc == MPI_SUCCESS ? rc : fail("MPI_Recv", rc);
}

COLLCHECK_MPI_EXPORT int collcheck_mpi_barrier_start(void) {
  if (comm == MPI_COMM_NULL)
    return notConnected();
  int rc = MPI_Ibarrier(comm, &barrier);
  return rc == MPI_SUCCESS ? rc : fail("MPI_Ibarrier", rc);
}

COLLCHECK_MPI_EXPORT int collcheck_mpi_barrier_test(int *done) {
  if (barrier == MPI_REQUEST_NULL)
    return failWith(MPI_ERR_REQUEST, "collcheck_mpi_barrier_start was not called");
  int rc = MPI_Test(&barrier, done, MPI_STATUS_IGNORE);
  return rc == MPI_SUCCESS ? rc : fail("MPI_Test (barrier)", rc);
}

COLLCHECK_MPI_EXPORT void collcheck_mpi_finalize(void) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    return;
  // Every message sent was awaited by its receiver, so these complete.
  for (Outgoing &message : outgoing)
    MPI_Wait(&message.request, MPI_STATUS_IGNORE);
  outgoing.clear();
  if (comm != MPI_COMM_NULL)
    MPI_Comm_free(&comm);
  if (weInitialized) {
    sendSmallMessagesAtOnce();
    MPI_Finalize();
  }
}

COLLCHECK_MPI_EXPORT void collcheck_mpi_abort(int code) {
  MPI_Abort(comm != MPI_COMM_NULL ? comm : MPI_COMM_WORLD, code);
}

COLLCHECK_MPI_EXPORT const char *collcheck_mpi_last_error(void) { return lastError; }
