// Package askhook carries the ask options that package mrtr keeps for
// mrtrkit's own layers on top of it, so that they reach those layers
// without joining mrtr's public API.
//
// Package mrtr sets every variable of this package when it is
// initialised; a package that imports mrtr may use them as
// mrtr.AskOption values (Compile as a func(...mrtr.AskOption)
// mrtr.AskOption).
package askhook

// ContentJSON is an mrtr.AskOption for an elicitation whose asker reads
// the answer only through ContentJSON: an answer replayed from the call's
// state then comes without its Content map (ContentJSON still returns
// the content). typed.Form uses it.
var ContentJSON any

// Compile is a func(...mrtr.AskOption) mrtr.AskOption: it applies the
// options once and returns one option that stands for all of them, with
// what they decide computed ahead (the question's identity, under
// BindTo). Ask with it alone, it costs no allocation per ask. typed.Form
// compiles the options it asks every form with.
var Compile any
