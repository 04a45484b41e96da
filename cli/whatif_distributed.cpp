#include "cli/whatif_distributed.hpp"

#ifdef PARASIM_WITH_MPI
#include <cstdlib>
#include <mpi.h>
#include <stdexcept>

#include "cli/whatif_report.hpp"
#include "core/error.hpp"
#endif

namespace parasim::cli {

#ifndef PARASIM_WITH_MPI

bool is_root_process() { return true; }

std::vector<planner::Outcome> evaluate_distributed(const std::vector<planner::Job>& jobs, const planner::WhatifOptions& options) {
  return planner::evaluate_jobs(jobs, options);
}

#else

namespace {

// mpirun (Open MPI, or a PMI/PMIx launcher) marks the processes it starts; a process started any
// other way is one rank and never initializes MPI (a singleton init would try to start a daemon).
bool launched_by_mpirun() { return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK"); }

// MPI belongs to the process, not to a command: initialized on first use, finalized at exit.
class MpiSession {
 public:
  static MpiSession& get() {
    static MpiSession session;
    return session;
  }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  ~MpiSession() {
    if (active) MPI_Finalize();
  }
  bool active = false;
  int rank = 0, size = 1;

 private:
  MpiSession() {
    if (!launched_by_mpirun()) return;
    int provided = 0;
    // Only the main thread calls MPI; the worker threads only simulate.
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    active = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  }
};

// What a rank sends rank 0: its outcomes in its job order, or the error its jobs raised (so that no
// rank waits forever on one that failed).
std::string rank_payload(const std::vector<planner::Job>& mine, const planner::WhatifOptions& options) {
  nlohmann::json j;
  try {
    nlohmann::json outcomes = nlohmann::json::array();
    for (const auto& o : planner::evaluate_jobs(mine, options)) outcomes.push_back(outcome_json(o));
    j["outcomes"] = std::move(outcomes);
  } catch (const InputError& e) {
    j["input_error"] = {{"file", e.where().file}, {"line", e.where().line}, {"column", e.where().column}, {"key", e.key_path()}, {"message", e.message()}};
  } catch (const std::exception& e) {
    j["error"] = e.what();
  }
  return j.dump();
}

}  // namespace

bool is_root_process() { return MpiSession::get().rank == 0; }

std::vector<planner::Outcome> evaluate_distributed(const std::vector<planner::Job>& jobs, const planner::WhatifOptions& options) {
  auto& mpi = MpiSession::get();
  if (!mpi.active || mpi.size == 1) return planner::evaluate_jobs(jobs, options);
  // Job i runs on rank i mod size: neighbouring variants (often of similar cost) land on different ranks.
  std::vector<planner::Job> mine;
  for (std::size_t i = static_cast<std::size_t>(mpi.rank); i < jobs.size(); i += static_cast<std::size_t>(mpi.size)) mine.push_back(jobs[i]);
  auto progress = options;
  if (options.progress) progress.progress = [&](std::size_t done, std::size_t) { options.progress(done * static_cast<std::size_t>(mpi.size), jobs.size()); };
  const std::string payload = rank_payload(mine, progress);
  const int length = static_cast<int>(payload.size());
  std::vector<int> lengths(static_cast<std::size_t>(mpi.size));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(static_cast<std::size_t>(mpi.size), 0);
  for (std::size_t r = 1; r < offsets.size(); ++r) offsets[r] = offsets[r - 1] + lengths[r - 1];
  std::vector<char> all(mpi.rank == 0 ? static_cast<std::size_t>(offsets.back() + lengths.back()) : 0);
  MPI_Gatherv(payload.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  if (mpi.rank != 0) return {};
  std::vector<planner::Outcome> out(jobs.size());
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    const auto j = nlohmann::json::parse(all.begin() + offsets[r], all.begin() + offsets[r] + lengths[r]);
    if (j.contains("input_error")) {
      const auto& e = j["input_error"];
      throw InputError({e["file"].get<std::string>(), e["line"].get<int>(), e["column"].get<int>()}, e["key"].get<std::string>(), e["message"].get<std::string>());
    }
    if (j.contains("error")) throw std::runtime_error(j["error"].get<std::string>());
    const auto& outcomes = j["outcomes"];
    for (std::size_t k = 0; k < outcomes.size(); ++k) out[r + k * lengths.size()] = outcome_from_json(outcomes[k]);
  }
  return out;
}

#endif

}  // namespace parasim::cli
