// maskgat: the command-line front end of the library.
//
// Exit codes: 0 success; 1 bad data or I/O (a missing, unreadable or malformed input file);
// 2 bad usage (unknown option, missing or invalid value).

#include <CLI/CLI.hpp>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string>

#include "info.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/version.hpp"
#include "train.hpp"
#include "use_model.hpp"

namespace {

constexpr int kExitData = 1;
constexpr int kExitUsage = 2;

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("MaskGAT: graph attention networks on sparse masked attention", "maskgat");
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("maskgat ") + maskgat::kVersion);
  app.footer("Exit codes: 0 success, 1 bad data or I/O, 2 bad usage.");
  maskgat::app::InfoOptions info;
  maskgat::app::add_info_command(app, info);
  maskgat::app::TrainCommandOptions train;
  maskgat::app::add_train_command(app, train);
  maskgat::app::EvaluateOptions evaluate;
  maskgat::app::add_evaluate_command(app, evaluate);
  maskgat::app::PredictOptions predict;
  maskgat::app::add_predict_command(app, predict);
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
    app.exit(error);
    return kExitUsage;
  }
  try {
    if (app.got_subcommand("info")) return maskgat::app::run_info(info);
    if (app.got_subcommand("train")) return maskgat::app::run_train(train);
    if (app.got_subcommand("evaluate")) return maskgat::app::run_evaluate(evaluate);
    if (app.got_subcommand("predict")) return maskgat::app::run_predict(predict);
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
