// Package knowledgetest holds what the tests of the knowledge packages
// share: Ops, which runs knowledge operations from the JSON parameters a
// test writes (decoded and validated by package api, executed by the
// package under test) and fails the test on the unexpected; and Helper,
// which starts the test binary itself as a named helper process (see
// internal/testproc's pattern) for crash and concurrency tests.
//
// It is imported by tests only; it opens no store itself and does not
// know which package executes the operations.
//
// # Concurrency
//
// An Ops belongs to its test's goroutine.
//
// # Crash behaviour
//
// Helper kills and reaps the process it started when the test ends.
package knowledgetest
