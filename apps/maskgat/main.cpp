// maskgat: the command-line front end of the library.
//
// Exit codes: 0 success; 1 bad data or I/O (a missing, unreadable or malformed input file);
// 2 bad usage (unknown option, missing or invalid value).

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstddef>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "../common/allocator.hpp"
#include "convert.hpp"
#include "info.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/version.hpp"
#include "partition.hpp"
#include "torch_state.hpp"
#include "train.hpp"
#include "use_model.hpp"

namespace {

constexpr int kExitData = 1;
constexpr int kExitUsage = 2;

// Edits (insertions, deletions, substitutions, swaps of neighbours) that turn `a` into `b`.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// The candidate closest to `word`, when it is close enough to be a likely typo (at most a third of
// its letters wrong, and at least one right); empty when none is.
std::string closest(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(1, word.size() / 3) + 1;
  for (const std::string& candidate : candidates) {
    const std::size_t distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

// Says what a mistyped command or option was probably meant to be. Returns false when the error is
// of another kind (then CLI11's own message stands).
bool explain_unknown(const CLI::App& app, int argc, char** argv) {
  std::vector<std::string> commands;
  for (const CLI::App* command : app.get_subcommands({})) commands.push_back(command->get_name());
  const std::vector<CLI::App*> given = app.get_subcommands();
  if (given.empty()) {
    if (argc < 2 || argv[1][0] == '-') return false;
    const std::string word = argv[1];
    const std::string guess = closest(word, commands);
    std::cerr << "error: unknown command '" << word << "'"
              << (guess.empty() ? "" : "; did you mean '" + guess + "'?")
              << " (commands: " << CLI::detail::join(commands, ", ") << ")\n";
    return true;
  }
  const CLI::App& command = *given.front();
  std::vector<std::string> options;
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) options.push_back("--" + name);
  }
  bool explained = false;
  for (const std::string& extra : app.remaining(true)) {
    if (extra.size() < 2 || extra[0] != '-') continue;
    const std::string option = extra.substr(0, extra.find('='));
    const std::string guess = closest(option, options);
    std::cerr << "error: unknown option '" << option << "' for 'maskgat " << command.get_name()
              << "'" << (guess.empty() ? "" : "; did you mean '" + guess + "'?") << '\n';
    explained = true;
  }
  return explained;
}

}  // namespace

int main(int argc, char** argv) {
  maskgat::app::keep_freed_memory();
  CLI::App app("MaskGAT: graph attention networks on sparse masked attention", "maskgat");
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("maskgat ") + maskgat::kVersion);
  app.footer("Exit codes: 0 success, 1 bad data or I/O, 2 bad usage.");
  // Every error line starts with `error:`, CLI11's own (a value out of range, say) too.
  app.failure_message([](const CLI::App* failed, const CLI::Error& error) {
    return "error: " + CLI::FailureMessage::simple(failed, error);
  });
  maskgat::app::InfoOptions info;
  maskgat::app::add_info_command(app, info);
  maskgat::app::TrainCommandOptions train;
  maskgat::app::add_train_command(app, train);
  maskgat::app::EvaluateOptions evaluate;
  maskgat::app::add_evaluate_command(app, evaluate);
  maskgat::app::PredictOptions predict;
  maskgat::app::add_predict_command(app, predict);
  maskgat::app::ConvertOptions convert;
  maskgat::app::add_convert_command(app, convert);
  maskgat::app::PartitionOptions partition;
  maskgat::app::add_partition_command(app, partition);
  maskgat::app::ImportOptions import_options;
  maskgat::app::add_import_command(app, import_options);
  maskgat::app::ExportOptions export_options;
  maskgat::app::add_export_command(app, export_options);
  for (CLI::App* command : app.get_subcommands({})) {
    const std::string examples = command->get_footer();
    command->footer(examples.empty() ? app.get_footer() : examples + "\n\n" + app.get_footer());
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForVersion& version) {
    return app.exit(version);
  } catch (const CLI::ParseError& error) {
    if (explain_unknown(app, argc, argv)) {
      std::cerr << "Run with --help for more information.\n";
    } else {
      app.exit(error);
    }
    return kExitUsage;
  }
  try {
    if (app.got_subcommand("info")) return maskgat::app::run_info(info);
    if (app.got_subcommand("train")) return maskgat::app::run_train(train);
    if (app.got_subcommand("evaluate")) return maskgat::app::run_evaluate(evaluate);
    if (app.got_subcommand("predict")) return maskgat::app::run_predict(predict);
    if (app.got_subcommand("convert")) return maskgat::app::run_convert(convert);
    if (app.got_subcommand("partition")) return maskgat::app::run_partition(partition);
    if (app.got_subcommand("import")) return maskgat::app::run_import(import_options);
    if (app.got_subcommand("export")) return maskgat::app::run_export(export_options);
  } catch (const maskgat::InvalidArgument& error) {
    std::cerr << "error: " << error.what() << '\n';
    return kExitUsage;
  } catch (const maskgat::Error& error) {
    std::cerr << "error: " << error.what() << '\n';
    return kExitData;
  } catch (const std::bad_alloc&) {
    std::cerr << "error: out of memory\n";
    return kExitData;
  } catch (const std::filesystem::filesystem_error& error) {
    // The library reports file problems as IoError; this is the net under the CLI's own calls.
    const std::string path = error.path1().string();
    std::cerr << "error: " << (path.empty() ? "" : path + ": ") << error.code().message() << '\n';
    return kExitData;
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << '\n';
    return kExitData;
  }
  return kExitUsage;
}
