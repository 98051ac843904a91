// The `schedules` report: a threaded scenario's searches as text and as
// JSON, a shard's identity (what makes it part of one search and no other),
// and shard documents read back and merged into the search they split.
//
// Shard documents come from other machines (a CI matrix's artifacts), so
// reading them back is reading hostile input: every field is range-checked
// and a refusal names the file, the line and column and the JSON pointer. A
// shard carries a digest of the scenario file's bytes, impsim's version and
// every option that changes the search; shards whose identities differ are
// refused, naming the field that differs, never merged into one count.
// Counts are checked to add up (each outcome's schedules to the shard's
// total, the shards' totals without wrapping).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "impsim/report/schedule_gate.h"
#include "impsim/run/run.h"
#include "impsim/run/schedules.h"

namespace impsim {

// What one `schedules --shard I/N` invocation searched: the scenario (its
// bytes' SHA-256), the impsim that searched it and every option that
// changes what a search finds. Shards merge only when these are equal.
struct ShardIdentity {
  std::string scenario_sha256;
  std::string impsim;
  nlohmann::ordered_json options;  // {"variants": ..., "set": ..., "limits": ..., "search": ..., "shards": N}
  uint32_t shard = 1;              // this one, 1 to options.shards
  // The digest of the three fields above: a document whose fields do not
  // give its digest was edited, and is refused.
  std::string digest() const;
};

// The identity of a shard of `search` over `scenario_text` under `run`.
ShardIdentity shard_identity(const std::string& scenario_text, const RunOptions& run, const SearchOptions& search);

// An outcome as data: each thread's end, the waits of a hang, sys.modules,
// the marks and the counters (what a --merge reads back, and what
// `schedules` and `compare` write beside each outcome's line).
nlohmann::ordered_json threaded_json(const ThreadedOutcome& o);

// The text report of a scenario's searches.
std::string schedules_text(const std::string& name, const std::vector<DesignSearch>& searches);
// The same as GitHub-flavoured Markdown (a job summary, a PR comment): a
// heading, then per design its coverage and a table of its outcomes.
std::string schedules_markdown(const std::string& name, const std::vector<DesignSearch>& searches);

// `points`: each outcome's schedule written out point by point (a JSON
// array), or null where there is none.
using PointsOf = std::function<nlohmann::ordered_json(const DesignSearch&, const std::string& schedule)>;

nlohmann::ordered_json points_json(const std::vector<PointText>& points);

// The JSON report; with `shard`, the document a --merge reads back. With
// `gate` (gate_schedules over `searches`, in order, for `scenario`): each
// search's findings and what the scenario expects of it, the gate and the
// exit status; a shard carries what the scenario expects, so that --merge
// gates the whole search as an unsplit run does.
nlohmann::ordered_json schedules_json(const std::string& name, const std::string& file,
                                      const std::vector<DesignSearch>& searches, const PointsOf& points,
                                      const ShardIdentity* shard = nullptr, const ScheduleGate* gate = nullptr,
                                      const GateScenario* scenario = nullptr);

// One scenario's searches, merged from its shards, in the order the
// documents first named them; each outcome's points (when the shards had
// them) from the shard that reached its representative.
struct MergedSchedules {
  std::string name, file;
  std::vector<DesignSearch> searches;
  std::vector<std::map<std::string, nlohmann::ordered_json>> points;  // by searches' index: schedule -> points
  // What the shards say the scenario accepts (`allow_error`,
  // `expect_schedules`), for the gate; no source, so no line and column.
  GateScenario gate;
};

// A shard file's name and bytes, as the command line's reader read them
// (bounded by --max-file-bytes).
struct ShardFile {
  std::string file;
  std::string text;
};

// Reads the shard files (a JSON document each, an array of them, or JSON
// lines; nested at most `max_json_depth` deep), checks them and merges
// each search's shards. Throws InputError (a field out of range, a shard
// missing or given twice, identities that differ) and InputLimitError
// (nesting past the depth).
std::vector<MergedSchedules> merge_shard_files(const std::vector<ShardFile>& files, int max_json_depth);

}  // namespace impsim
