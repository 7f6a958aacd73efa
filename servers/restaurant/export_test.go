package restaurant

// PlainItems is plainItems, for the package's external tests.
var PlainItems = plainItems
