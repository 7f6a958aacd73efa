// Package specloop holds the end-to-end test of the maintainer's loop after a
// spec edit (docs/maintaining-specs.md): on a scratch checkout of HEAD, the
// guide's commands as written, then a table of spec edits generated but not
// committed, through make breaking, generate, check-generated and cover.
// The tests run only when APISTACK_SPEC_LOOP is set (`make spec-loop`): they
// take minutes.
package specloop
