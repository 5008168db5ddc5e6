#include "tests/nccl_double/src/rendezvous.h"

#include "tests/nccl_double/src/errors.h"
#include "tests/nccl_double/src/mpi_transport.h"

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace collcheck::nccl_double {
namespace {

constexpr char kMagic[] = "collcheck-nccl-double-id";
constexpr std::uint32_t kLayoutVersion = 1;
// Join messages travel on MPI_COMM_WORLD with one of these tags (the highest the MPI library
// allows), chosen by the id's counter so that ids made by one process do not meet.
constexpr int kJoinTagSpan = 1024;

struct IdContents {
  char magic[sizeof kMagic];
  std::uint32_t layoutVersion;
  std::int32_t rootWorldRank;
  std::uint64_t hostHash;
  std::uint64_t pid;
  std::uint64_t counter;
  std::uint64_t random[2];
};
static_assert(sizeof(IdContents) <= sizeof(ncclUniqueId));

struct JoinRequest {
  std::uint64_t key;
  std::int32_t nranks;
  std::int32_t rank;
  std::int32_t worldRank;
};

std::uint64_t fnv1a(const void *data, std::size_t size) {
  std::uint64_t hash = 1469598103934665603ull;
  for (std::size_t i = 0; i < size; ++i) {
    hash ^= static_cast<const unsigned char *>(data)[i];
    hash *= 1099511628211ull;
  }
  return hash;
}

int worldRank() {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int joinTag(std::uint64_t counter) {
  int *upperBound = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &upperBound, &found);
  const int highest = found && upperBound ? *upperBound : 32767;
  return highest - int(counter % kJoinTagSpan);
}

ncclResult_t decode(const ncclUniqueId &id, IdContents &contents) {
  std::memcpy(&contents, id.internal, sizeof contents);
  if (std::memcmp(contents.magic, kMagic, sizeof kMagic) != 0 ||
      contents.layoutVersion != kLayoutVersion)
    return fail(ncclInvalidArgument,
                "the ncclUniqueId was not made by this test double's ncclGetUniqueId");
  return ncclSuccess;
}

// The root collects one join request from every other rank and answers each with the world
// rank of every NCCL rank (or a negative status when the requests do not fit together).
ncclResult_t collectJoins(std::uint64_t key, int nranks, int rank, int tag,
                          std::vector<int> &worldRanks) {
  worldRanks.assign(std::size_t(nranks), -1);
  worldRanks[std::size_t(rank)] = worldRank();
  std::vector<int> joiners;
  std::string problem;
  while (int(joiners.size()) < nranks - 1) {
    JoinRequest request{};
    MPI_Status status;
    if (int code = PMPI_Recv(&request, int(sizeof request), MPI_BYTE, MPI_ANY_SOURCE, tag,
                             MPI_COMM_WORLD, &status);
        code != MPI_SUCCESS)
      return mpiFailure(code, "receiving a join request");
    joiners.push_back(status.MPI_SOURCE);
    if (request.key != key)
      problem = "world rank " + std::to_string(status.MPI_SOURCE) +
                " joined with a different unique id on the same tag";
    else if (request.nranks != nranks)
      problem = "world rank " + std::to_string(status.MPI_SOURCE) + " says nranks " +
                std::to_string(request.nranks) + ", the root says " + std::to_string(nranks);
    else if (request.rank < 0 || request.rank >= nranks)
      problem = "rank " + std::to_string(request.rank) + " is out of range";
    else if (worldRanks[std::size_t(request.rank)] != -1)
      problem = "NCCL rank " + std::to_string(request.rank) + " was claimed twice";
    else
      worldRanks[std::size_t(request.rank)] = request.worldRank;
  }
  for (std::size_t a = 0; a < worldRanks.size() && problem.empty(); ++a)
    for (std::size_t b = a + 1; b < worldRanks.size(); ++b)
      if (worldRanks[a] == worldRanks[b])
        problem = "NCCL ranks " + std::to_string(a) + " and " + std::to_string(b) +
                  " are in one MPI process; the test double runs one rank per process with "
                  "ncclCommInitRank (use ncclCommInitAll for several ranks in one process)";
  std::vector<int> answer{problem.empty() ? 0 : -1};
  answer.insert(answer.end(), worldRanks.begin(), worldRanks.end());
  for (int joiner : joiners)
    if (int code =
            PMPI_Send(answer.data(), int(answer.size()), MPI_INT, joiner, tag, MPI_COMM_WORLD);
        code != MPI_SUCCESS)
      return mpiFailure(code, "answering a join request");
  if (!problem.empty())
    return fail(ncclInvalidUsage, "ncclCommInitRank: " + problem);
  return ncclSuccess;
}

ncclResult_t joinRoot(const IdContents &contents, std::uint64_t key, int nranks, int rank, int tag,
                      std::vector<int> &worldRanks) {
  const JoinRequest request{key, nranks, rank, worldRank()};
  if (int code = PMPI_Send(&request, int(sizeof request), MPI_BYTE, contents.rootWorldRank, tag,
                           MPI_COMM_WORLD);
      code != MPI_SUCCESS)
    return mpiFailure(code, "sending a join request to world rank " +
                                std::to_string(contents.rootWorldRank));
  std::vector<int> answer(std::size_t(nranks) + 1);
  if (int code = PMPI_Recv(answer.data(), int(answer.size()), MPI_INT, contents.rootWorldRank, tag,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      code != MPI_SUCCESS)
    return mpiFailure(code, "receiving the member list");
  if (answer[0] != 0)
    return fail(ncclInvalidUsage, "ncclCommInitRank: the root (world rank " +
                                      std::to_string(contents.rootWorldRank) +
                                      ") rejected the ranks' join requests; see its message");
  worldRanks.assign(answer.begin() + 1, answer.end());
  return ncclSuccess;
}

} // namespace

ncclResult_t generateUniqueId(ncclUniqueId *id) {
  NCCL_DOUBLE_CHECK(ensureMpiInitialized());
  static std::atomic<std::uint64_t> counter{0};
  IdContents contents{};
  std::memcpy(contents.magic, kMagic, sizeof kMagic);
  contents.layoutVersion = kLayoutVersion;
  contents.rootWorldRank = worldRank();
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  contents.hostHash = fnv1a(host, std::strlen(host));
  contents.pid = std::uint64_t(getpid());
  contents.counter = counter++;
  std::random_device random;
  for (std::uint64_t &word : contents.random)
    word = (std::uint64_t(random()) << 32) ^ random();
  std::memset(id->internal, 0, sizeof id->internal);
  std::memcpy(id->internal, &contents, sizeof contents);
  return ncclSuccess;
}

std::uint64_t uniqueIdKey(const ncclUniqueId &id) { return fnv1a(id.internal, sizeof id.internal); }

ncclResult_t rendezvous(const ncclUniqueId &id, int nranks, int rank, MPI_Comm *privateComm) {
  IdContents contents{};
  NCCL_DOUBLE_CHECK(decode(id, contents));
  NCCL_DOUBLE_CHECK(ensureMpiInitialized());
  int worldSize = 0;
  PMPI_Comm_size(MPI_COMM_WORLD, &worldSize);
  if (contents.rootWorldRank < 0 || contents.rootWorldRank >= worldSize)
    return fail(ncclInvalidArgument,
                "the unique id comes from world rank " + std::to_string(contents.rootWorldRank) +
                    ", which is not in this MPI job of " + std::to_string(worldSize));
  const std::uint64_t key = uniqueIdKey(id);
  const int tag = joinTag(contents.counter);
  std::vector<int> worldRanks;
  const bool isRoot = contents.rootWorldRank == worldRank();
  NCCL_DOUBLE_CHECK(isRoot ? collectJoins(key, nranks, rank, tag, worldRanks)
                           : joinRoot(contents, key, nranks, rank, tag, worldRanks));

  // Only the members take part: the new communicator is made from a group, not a world split.
  MPI_Group worldGroup, members;
  PMPI_Comm_group(MPI_COMM_WORLD, &worldGroup);
  PMPI_Group_incl(worldGroup, nranks, worldRanks.data(), &members);
  const int code = PMPI_Comm_create_group(MPI_COMM_WORLD, members, tag, privateComm);
  PMPI_Group_free(&members);
  PMPI_Group_free(&worldGroup);
  if (code != MPI_SUCCESS)
    return mpiFailure(code, "creating the communicator's MPI group");
  return ncclSuccess;
}

} // namespace collcheck::nccl_double
