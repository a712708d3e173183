// The rdmasim command line (docs/cli.md). Exit codes: 0 complete or time
// limit, 1 internal error, 2 bad input, 3 no progress (stalled), 4 a QP ran
// out of retries, 5 PFC deadlock, 6 wall-time limit, 7 an output could not
// be written, 8 an invariant violated (--check), 130 and 143 interrupted by
// SIGINT and SIGTERM.
#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "sim/cli/progress.h"
#include "sim/cpus.h"
#include "sim/output/nccl_tests_table.h"
#include "sim/output/output_error.h"
#include "sim/output/output_folder.h"
#include "sim/output/summary.h"
#include "sim/output/trace_writer.h"
#include "sim/output/version.h"
#include "sim/scenario/describe.h"
#include "sim/scenario/input_limits.h"
#include "sim/scenario/memory_estimate.h"
#include "sim/scenario/runner.h"
#include "sim/scenario/scenario_error.h"
#include "sim/scenario/schema.h"
#include "topologies/export.h"

namespace po = boost::program_options;
using namespace rdmasim;

namespace {

constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitOutput = 7;  // an output could not be written (OutputError)

// The process's only mutable globals, because a signal handler can reach
// nothing else: the first SIGINT or SIGTERM asks the run to stop at its
// next safe point (RunOptions::stop_signal); a second one removes the
// temporaries being written and exits at once. Only async-signal-safe
// calls in the handler: a lock-free atomic, unlink, _exit.
std::atomic<int> g_stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);
char g_temporaries[2][PATH_MAX + 8];

extern "C" void on_stop_signal(int sig) {
  int none = 0;
  if (g_stop_signal.compare_exchange_strong(none, sig)) return;
  for (const char* tmp : g_temporaries) {
    if (tmp[0] != '\0') unlink(tmp);
  }
  _exit(128 + sig);
}

// SIGTERM always; SIGINT unless it is ignored (as a shell without job
// control does for `rdmasim run ... &`, so that ^C spares background runs).
void catch_stop_signals(const std::vector<std::string>& temporaries) {
  for (size_t i = 0; i < temporaries.size() && i < 2; ++i) {
    // A path that does not fit is left out (a cut one could name another file).
    if (temporaries[i].size() < sizeof g_temporaries[i]) {
      std::memcpy(g_temporaries[i], temporaries[i].c_str(), temporaries[i].size() + 1);
    }
  }
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, nullptr);
  struct sigaction old {};
  sigaction(SIGINT, nullptr, &old);
  if (old.sa_handler != SIG_IGN) sigaction(SIGINT, &sa, nullptr);
}

const char* kUsage =
    "usage: rdmasim run FILE [--out DIR] [--set PATH=VALUE]... [--seed N] [--threads N] "
    "[--force-threads] [--partitions N] [--check] [--memory-limit SIZE] [--no-huge-pages] "
    "[--quiet]\n"
    "       rdmasim validate FILE [--set PATH=VALUE]... [--seed N] [--estimate] "
    "[--memory-limit SIZE]\n"
    "       rdmasim resolve FILE [--set PATH=VALUE]... [--seed N]\n"
    "       rdmasim topo FILE [--summary] [--dot PATH|-] [--set PATH=VALUE]...\n"
    "       rdmasim describe [KEY.PATH] [--markdown [--group G | --exclude G]]\n"
    "       rdmasim schema\n"
    "       rdmasim COMMAND --help | --version | --help\n";

// What each command does, for `rdmasim COMMAND --help`.
struct Command {
  const char* name;
  const char* usage;
  const char* what;
};
constexpr Command kCommands[] = {
    {"run",
     "rdmasim run FILE [--out DIR] [--set PATH=VALUE]... [--seed N] [--threads N] "
     "[--force-threads] [--partitions N] [--check] [--memory-limit SIZE] [--no-huge-pages] "
     "[--quiet]",
     "Runs a scenario and writes summary.json and trace.h5 (docs/cli.md)."},
    {"validate",
     "rdmasim validate FILE [--set PATH=VALUE]... [--seed N] [--estimate] [--memory-limit SIZE]",
     "Checks a scenario (every key, the topology, the traffic) without running it; with\n"
     "--estimate, prints the memory a run is expected to need, by part."},
    {"resolve", "rdmasim resolve FILE [--set PATH=VALUE]... [--seed N]",
     "Prints the scenario as it runs: overrides applied, every default filled in; the text\n"
     "the trace stores as /meta/scenario."},
    {"topo", "rdmasim topo FILE [--summary] [--dot PATH|-] [--set PATH=VALUE]...",
     "Prints the topology's counts per tier, links per rate and bisection bandwidth, or\n"
     "writes it as Graphviz."},
    {"describe", "rdmasim describe [KEY.PATH] [--markdown [--group G | --exclude G]]",
     "Prints every scenario parameter under KEY.PATH (all of them without one) with its\n"
     "type, unit, default and description. A kind is a path segment of its own:\n"
     "fabric.nic.timeout, topology.fat_tree.k, traffic.incast.jitter."},
    {"schema", "rdmasim schema",
     "Prints the JSON Schema (draft 2020-12) of scenario files, as docs/schema.json."},
};

const Command* find_command(const std::string& name) {
  for (const Command& c : kCommands) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

int bad_input(const std::string& line) {
  std::cerr << "rdmasim: error: " << line << "\n";
  return kExitBadInput;
}

struct Args {
  std::string command;
  std::string file;
  std::string out;
  std::vector<std::string> sets;
  std::optional<uint64_t> seed;
  bool quiet = false;
  uint32_t threads = 1;
  bool force_threads = false;
  uint32_t partitions = 0;        // --partitions: 0 chooses (RunOptions::partitions)
  bool huge_pages = true;         // --no-huge-pages turns it off
  bool check = kChecksByDefault;  // --check (on by default in Debug builds)
  std::string dot;
  bool summary = false;
  std::string key_path;
  bool markdown = false;
  std::string group;
  std::string exclude;
  bool help = false;
  bool estimate = false;
  std::string memory_limit;  // a size, "none", or empty: the machine's
};

po::options_description options_for(const std::string& command) {
  po::options_description opts;
  opts.add_options()("help,h", po::bool_switch(), "print this help");
  if (command == "describe") {
    opts.add_options()("markdown", po::bool_switch(), "print a Markdown table (for docs/*.md)")(
        "group", po::value<std::string>(), "with --markdown: only the parameters of this group")(
        "exclude", po::value<std::string>(), "with --markdown: all but this group's");
    return opts;
  }
  if (command == "schema") return opts;
  opts.add_options()("set", po::value<std::vector<std::string>>()->composing(),
                     "override a scenario key: PATH=VALUE (repeatable)")(
      "seed", po::value<std::string>(), "override the scenario's seed");
  if (command == "run" || command == "validate") {
    opts.add_options()("memory-limit", po::value<std::string>(),
                       "refuse a run whose memory estimate is above SIZE (e.g. 8GiB; none: no "
                       "check; default: the memory available)");
  }
  if (command == "validate") {
    opts.add_options()("estimate", po::bool_switch(),
                       "print the memory a run is expected to need, by part");
  }
  if (command == "run") {
    opts.add_options()("out", po::value<std::string>(), "folder for every artefact of the run")(
        "quiet,q", po::bool_switch(), "print nothing but errors")(
        "threads", po::value<std::string>(), "run the network split over N threads (default 1)")(
        "force-threads", po::bool_switch(),
        "keep the threads even when the first phase shows too few events per thread per "
        "lookahead for them to pay")(
        "partitions", po::value<std::string>(),
        "split the network into N partitions, at least one per thread, a thread's taking "
        "turns, for the caches (default: chosen by the fabric's size and traffic; 1: whole)")(
        "check", po::bool_switch(),
        "check the simulator's invariants while running (exit 8 if one is violated; "
        "docs/reliability.md)")(
        "no-huge-pages", po::bool_switch(),
        "leave the heap on the kernel's default pages (docs/architecture.md, Packets)");
  }
  if (command == "topo") {
    opts.add_options()("dot", po::value<std::string>(),
                       "write the topology as Graphviz to PATH (- for stdout)")(
        "summary", po::bool_switch(), "print counts per tier, links per rate, bisection bandwidth");
  }
  return opts;
}

Args parse(const std::string& command, int argc, char** argv) {
  po::options_description opts = options_for(command);
  po::options_description hidden;
  hidden.add_options()("positional", po::value<std::string>());
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  if (command != "schema") pos.add("positional", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
  po::notify(vm);
  Args a;
  a.command = command;
  a.help = vm["help"].as<bool>();
  if (a.help) return a;
  if (command == "describe" || command == "schema") {
    if (vm.count("positional")) a.key_path = vm["positional"].as<std::string>();
    if (vm.count("markdown")) a.markdown = vm["markdown"].as<bool>();
    if (vm.count("group")) a.group = vm["group"].as<std::string>();
    if (vm.count("exclude")) a.exclude = vm["exclude"].as<std::string>();
    if ((!a.group.empty() || !a.exclude.empty()) && !a.markdown) {
      throw ScenarioError("describe: --group and --exclude go with --markdown");
    }
    return a;
  }
  if (!vm.count("positional"))
    throw ScenarioError(command + ": missing scenario FILE (expected e.g. rdmasim " + command +
                        " scenarios/quickstart.json)");
  a.file = vm["positional"].as<std::string>();
  if (vm.count("set")) a.sets = vm["set"].as<std::vector<std::string>>();
  if (vm.count("seed")) {
    const std::string s = vm["seed"].as<std::string>();
    const bool digits =
        !s.empty() && s.size() <= 19 && s.find_first_not_of("0123456789") == std::string::npos;
    if (!digits) {
      throw ScenarioError("--seed: \"" + clip(s) +
                          "\" is not a seed (expected an integer from 0 to 9223372036854775807)");
    }
    a.seed = std::stoull(s);
  }
  // --threads and --partitions: a count from 1 to 64.
  const auto count_of = [&](const char* option, const char* what) -> uint32_t {
    const std::string s = vm[option].as<std::string>();
    const bool digits =
        !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string::npos;
    const int n = digits ? std::stoi(s) : 0;
    if (n < 1 || n > 64) {
      throw ScenarioError(std::string("--") + option + ": \"" + clip(s) + "\" is not a " + what +
                          " count (expected an integer from 1 to 64)");
    }
    return static_cast<uint32_t>(n);
  };
  if (vm.count("threads")) a.threads = count_of("threads", "thread");
  if (vm.count("force-threads")) a.force_threads = vm["force-threads"].as<bool>();
  if (vm.count("partitions")) {
    a.partitions = count_of("partitions", "partition");
    if (a.partitions < a.threads) {
      throw ScenarioError("--partitions: " + std::to_string(a.partitions) + " with --threads " +
                          std::to_string(a.threads) +
                          " (expected at least one partition per thread)");
    }
  }
  if (vm.count("no-huge-pages") && vm["no-huge-pages"].as<bool>()) a.huge_pages = false;
  if (vm.count("check") && vm["check"].as<bool>()) a.check = true;
  if (vm.count("memory-limit")) {
    a.memory_limit = vm["memory-limit"].as<std::string>();
    const Parsed<Bytes> b = parse_bytes(a.memory_limit);
    if (a.memory_limit != "none" && (!b || b.value->count() < 1)) {
      throw ScenarioError("--memory-limit: \"" + clip(a.memory_limit) +
                          "\" is not a size (expected e.g. 8GiB or 500MB, or none)");
    }
  }
  if (vm.count("estimate")) a.estimate = vm["estimate"].as<bool>();
  if (vm.count("out")) {
    a.out = vm["out"].as<std::string>();
    // An empty variable in `--out "$DIR"` must not write into output.dir.
    if (a.out.empty()) throw ScenarioError("--out: \"\" is empty (expected a folder)");
  }
  if (vm.count("quiet")) a.quiet = vm["quiet"].as<bool>();
  if (vm.count("dot")) a.dot = vm["dot"].as<std::string>();
  if (vm.count("summary")) a.summary = vm["summary"].as<bool>();
  return a;
}

Scenario load(const Args& a) {
  LoadOptions lo;
  lo.overrides = a.sets;
  if (a.seed) lo.overrides.push_back("seed=" + std::to_string(*a.seed));
  lo.output_dir = a.out;
  // Loading is where bad input shows: what escapes the loader's own checks
  // is still bad input (exit 2, naming the file), except a broken promise
  // of the code (std::logic_error: an internal error, exit 1).
  try {
    return load_scenario_file(a.file, lo);
  } catch (const ConfigError&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw ScenarioError(a.file +
                        ": out of memory while loading the scenario (expected a scenario that "
                        "fits in memory: fewer hosts, flows or samples)");
  } catch (const std::length_error&) {  // a container asked for more than it can hold
    throw ScenarioError(a.file +
                        ": out of memory while loading the scenario (expected a scenario that "
                        "fits in memory: fewer hosts, flows or samples)");
  } catch (const std::logic_error&) {
    throw;
  } catch (const std::exception& e) {
    throw ScenarioError(a.file + ": " + clip(e.what(), 200) + " (expected a valid scenario)");
  }
}

// --memory-limit, else what the machine has; none: no limit.
std::optional<MemoryLimit> memory_limit(const Args& a) {
  if (a.memory_limit == "none") return std::nullopt;
  if (!a.memory_limit.empty()) {
    return MemoryLimit{parse_bytes(a.memory_limit).value->count(), "--memory-limit"};
  }
  return machine_memory();
}

int run(const Args& a) {
  const auto load_start = std::chrono::steady_clock::now();
  const Scenario sc = load(a);
  const double load_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  // Before anything is written or removed.
  if (a.threads > sc.topology.num_hosts()) {
    return bad_input("--threads: " + std::to_string(a.threads) + " is more than the scenario's " +
                     std::to_string(sc.topology.num_hosts()) +
                     " hosts (expected at most one thread per host)");
  }
  if (a.partitions > sc.topology.num_hosts()) {
    return bad_input("--partitions: " + std::to_string(a.partitions) +
                     " is more than the scenario's " + std::to_string(sc.topology.num_hosts()) +
                     " hosts (expected at most one partition per host)");
  }
  if (a.threads > 1 && a.threads > usable_cpus() && !a.quiet) {
    // Allowed (results do not depend on it), but waiting threads then sleep
    // at once instead of spinning, and the run is likely slower.
    std::fprintf(stderr,
                 "rdmasim: note: --threads %u is more than the %u CPUs this process may use\n",
                 a.threads, usable_cpus());
  }
  // A run that cannot fit is refused now, not met by std::bad_alloc later.
  if (const auto limit = memory_limit(a)) {
    check_memory_limit(estimate_memory(sc, resident_bytes()), *limit);
  }
  namespace fs = std::filesystem;
  const fs::path dir(sc.output.dir);
  const fs::path summary_path = dir / "summary.json";
  const fs::path trace_path = dir / "trace.h5";
  // From here on a signal stops the run at its next safe point (and the
  // output folder, created next, shows a test that the handler is in place).
  catch_stop_signals({temporary_name(summary_path.string()), temporary_name(trace_path.string())});
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    return bad_input(std::string(a.out.empty() ? "output.dir" : "--out") + ": cannot create \"" +
                     sc.output.dir + "\": " + ec.message() + " (expected a writable folder)");
  }
  // Before anything is simulated: the outputs can be written; stale
  // temporaries of a killed run go; an earlier run's outputs go, so they
  // cannot pass for this run's if it fails.
  const std::vector<std::string> stale =
      prepare_outputs({summary_path.string(), trace_path.string()});
  if (!stale.empty() && !a.quiet) {
    std::string names;
    for (const std::string& f : stale) names += (names.empty() ? "" : ", ") + f;
    std::fprintf(stderr, "rdmasim: note: removed temporaries an earlier run left unfinished: %s\n",
                 names.c_str());
  }

  RunOptions ro;
  ro.threads = a.threads;
  ro.force_threads = a.force_threads;
  ro.partitions = a.partitions;
  ro.restart_when_sparse = true;  // its callbacks keep no state of the run
  ro.heap_huge_pages = a.huge_pages;
  ro.stop_signal = &g_stop_signal;
  ro.check = a.check;
  // The trace's time series beyond about 1 MiB each wait in unlinked
  // temporary files beside it, not in memory (sim/row_spool.h).
  if (sc.output.trace) ro.spool_dir = dir.string();
  ProgressLine progress;
  const bool show_progress = !a.quiet && isatty(STDERR_FILENO) != 0;
  if (show_progress) ro.progress = [&](const Progress& p) { progress.update(p); };
  RunResult r = run_scenario(sc, ro);
  r.wall.load_seconds = load_seconds;
  progress.clear();

  if (sc.output.trace) write_trace(trace_path.string(), sc, r);
  // The summary is written last: its presence means the run's outputs are whole.
  write_file_atomic(summary_path.string(), summary_json(sc, r));
  if (!a.quiet) {
    std::cout << human_summary(sc, r);
    // Each swept collective's table, as nccl-tests prints it.
    for (const CollectiveResult& c : r.collectives) std::cout << nccl_tests_table(c);
    std::cout << "  wrote " << summary_path.string();
    if (sc.output.trace) std::cout << ", " << trace_path.string();
    std::cout << "\n";
  }
  if (r.status == RunStatus::kDeadlock) {
    // PFC names a paused priority "p3", credits a VL "vl3" (a cycle is one or the other).
    std::string cycle;
    bool credits = false;
    for (const DeadlockQueue& q : r.deadlock.cycle) {
      credits = credits || q.blocked_by == BlockedBy::kCredits;
      cycle += (cycle.empty() ? "" : " -> ") + q.name + ":" + std::to_string(q.port) +
               (q.blocked_by == BlockedBy::kCredits ? "/vl" : "/p") + std::to_string(q.priority);
    }
    std::cerr << "rdmasim: " << (credits ? "credit" : "PFC") << " deadlock at "
              << to_human(r.deadlock.at) << ": " << cycle << "\n";
  }
  if (r.status == RunStatus::kStalled) {
    std::cerr << "rdmasim: no progress: the event queue emptied with " << r.flows.size()
              << " flows posted and not all complete\n";
  }
  if (r.status == RunStatus::kQpError) {
    std::cerr << "rdmasim: " << r.qp_errors
              << " QP(s) ran out of retries and entered the error state; their flows failed\n";
  }
  if (is_partial(r.status)) {
    std::cerr << "rdmasim: "
              << (r.status == RunStatus::kInterrupted ? "interrupted" : "wall-time limit") << " at "
              << to_human(r.sim_time) << " simulated; the outputs are partial\n";
  }
  // A signal, even one that came after the run ended, ends the process as
  // shells report a signal: 128 + its number.
  if (const int sig = g_stop_signal.load(); sig != 0) return 128 + sig;
  if (r.status == RunStatus::kInvariantViolated) {
    std::cerr << "rdmasim: internal error: " << r.invariant << " (please report it)\n";
  }
  return exit_code(r.status);
}

int validate(const Args& a) {
  const Scenario sc = load(a);
  // As run would refuse it; with --estimate the estimate is shown instead.
  const MemoryEstimate estimate = estimate_memory(sc, resident_bytes());
  const std::optional<MemoryLimit> limit = memory_limit(a);
  if (!a.estimate && limit) check_memory_limit(estimate, *limit);
  size_t switches = sc.topology.nodes().size() - sc.topology.num_hosts();
  std::cout << a.file << ": ok: \"" << sc.name << "\", " << sc.topology.num_hosts() << " hosts, "
            << switches << " switches, " << sc.topology.links().size() << " links, "
            << sc.flows.size() << " flows"
            << (sc.collectives.empty()
                    ? std::string()
                    : ", " + std::to_string(sc.collectives.size()) + " collective(s)")
            << "; scenario hash " << sc.hash << "\n";
  if (a.estimate) std::cout << format_estimate(estimate, limit);
  return 0;
}

int resolve(const Args& a) {
  const Scenario sc = load(a);
  std::cout << sc.resolved_json << "\n";
  return 0;
}

int describe(const Args& a) {
  const ParamNode node = find_param(a.key_path);
  if (a.markdown) {
    if (node.param != nullptr && node.param->child == nullptr) {
      throw ScenarioError("describe: " + a.key_path +
                          ": --markdown takes a path to an object or a kind (expected e.g. "
                          "fabric.nic)");
    }
    ParamNode table = node;
    if (node.param != nullptr) table = ParamNode{node.param->child, nullptr, node.path};
    std::cout << describe_markdown(table, a.group, a.exclude);
  } else {
    std::cout << describe_text(node);
  }
  return 0;
}

int schema() {
  std::cout << scenario_schema().dump(2) << "\n";
  return 0;
}

int help(const std::string& command) {
  const Command* c = find_command(command);
  std::cout << "usage: " << c->usage << "\n\n"
            << c->what << "\n\noptions:" << options_for(command)
            << "\nSee docs/cli.md for the commands and docs/scenario.md for the scenario format.\n";
  return 0;
}

int topo(const Args& a) {
  const Scenario sc = load(a);
  if (!a.dot.empty()) {
    const std::string dot = to_dot(sc.topology, sc.name);
    if (a.dot == "-") {
      std::cout << dot;
    } else {
      write_file_atomic(a.dot, dot);
    }
  }
  if (a.summary || a.dot.empty()) std::cout << topology_summary(sc.topology, sc.topology_info);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return kExitBadInput;
  }
  const std::string command = argv[1];
  if (command == "--version" || command == "-V") {
    std::cout << "rdmasim " << version() << " (" << git_revision() << ")\n";
    return 0;
  }
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kUsage << "\ncommands:\n";
    for (const Command& c : kCommands) {
      std::string what = c.what;
      for (size_t i = what.find('\n'); i != std::string::npos; i = what.find('\n', i + 1)) {
        what.insert(i + 1, 12, ' ');
      }
      std::cout << "  " << c.name << std::string(10 - std::strlen(c.name), ' ') << what << "\n";
    }
    std::cout << "\nrdmasim COMMAND --help lists a command's options. See docs/cli.md for the\n"
                 "commands and docs/scenario.md for the scenario format.\n";
    return 0;
  }
  if (find_command(command) == nullptr) {
    return bad_input("unknown command \"" + clip(command) +
                     "\" (expected run, validate, resolve, topo, describe, schema, --version or "
                     "--help)");
  }
  try {
    const Args a = parse(command, argc - 1, argv + 1);
    if (a.help) return help(command);
    if (command == "topo") return topo(a);
    if (command == "resolve") return resolve(a);
    if (command == "describe") return describe(a);
    if (command == "schema") return schema();
    return command == "run" ? run(a) : validate(a);
  } catch (const ConfigError& e) {
    return bad_input(e.what());
  } catch (const OutputError& e) {
    std::cerr << "rdmasim: error: " << e.what() << "\n";
    return kExitOutput;
  } catch (const po::error& e) {
    return bad_input(clip(e.what(), 300) + " (see rdmasim --help)");
  } catch (const std::bad_alloc&) {
    std::cerr << "rdmasim: error: out of memory\n";
    return kExitInternal;
  } catch (const std::exception& e) {
    std::cerr << "rdmasim: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}
