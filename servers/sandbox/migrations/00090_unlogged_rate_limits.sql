-- +goose Up
-- Rate-limit buckets of sandbox creates make no write-ahead log; after a
-- crash of PostgreSQL they start full (docs/scaling-out.md, "Rate limits").
{{if postgres}}ALTER TABLE rate_limits SET UNLOGGED;
{{end}}
-- +goose Down
{{if postgres}}ALTER TABLE rate_limits SET LOGGED;
{{end -}}
