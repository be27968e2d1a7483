import Foundation

// `appleid-mock-bench`: measures the mock against this machine's ceilings in one run and prints
// the table BENCHMARKS.md quotes. See BenchOptions.usage.
exit(BenchCommand.run(Array(CommandLine.arguments.dropFirst())))
