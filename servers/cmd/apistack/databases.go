package main

import (
	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/internal/dbopen"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/restaurant"
	"github.com/apistack/apistack/servers/storage"
)

// apiSchemas are the tables of each API, by name: the SQLite file
// <data-dir>/<name>.db or the PostgreSQL schema <name>.
func apiSchemas() map[string]dbopen.Schema {
	return map[string]dbopen.Schema{
		"pam":        {Name: "pam", SQLite: pam.Migrations(), Postgres: pam.PostgresMigrations()},
		"fax":        {Name: "fax", SQLite: fax.Migrations(), Postgres: fax.PostgresMigrations()},
		"restaurant": {Name: "restaurant", SQLite: restaurant.Migrations(), Postgres: restaurant.PostgresMigrations()},
		"storage":    {Name: "storage", SQLite: storage.Migrations(), Postgres: storage.PostgresMigrations()},
	}
}
