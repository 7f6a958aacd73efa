// Package benchhttp is the HTTP benchmark harness that checks the project's
// performance targets over real HTTP: it builds and starts the real
// `apistack serve --demo`, loads realistic data through the public APIs, and
// measures each scenario's request against apistack, against a bare echo
// server replaying apistack's recorded answer (the ceiling), and against
// Prism's mock of the same spec, in interleaved rounds, with its own
// closed-loop load generator. Report.WriteMarkdown writes BENCHMARKS.md.
package benchhttp
