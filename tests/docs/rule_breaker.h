/// @file
/// A header that breaks each API-documentation rule once, for tests/docs/rules_fire_test.cmake
/// (label docs): the checks must name every breach. Never installed or compiled.
/// @paper none (a test fixture). It lacks the memory section that rule 2 asks for.
#ifndef FEDSTAT_TESTS_DOCS_RULE_BREAKER_H_
#define FEDSTAT_TESTS_DOCS_RULE_BREAKER_H_

namespace fedstat {
class Status {};

/// A fallible function documented without its errors (rule 3).
Status fallible_without_errors(int x);

/// A fallible function with an @errors section that names no status code (rule 3).
/// @errors something may go wrong.
Status fallible_with_vague_errors(int x);

/// A fallible function that follows rule 3.
/// @errors kInvalidArgument: x < 0.
Status fallible_with_errors(int x);

int undocumented_function(int x);  // no doc comment: Doxygen's warning (rule 1)
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_DOCS_RULE_BREAKER_H_
