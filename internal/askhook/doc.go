// Package askhook carries the ask options that package mrtr keeps for
// mrtrkit's own layers on top of it, so that they reach those layers
// without joining mrtr's public API.
//
// Package mrtr sets every variable of this package when it is
// initialised; a package that imports mrtr may use them as
// mrtr.AskOption values.
package askhook

// ContentJSON is an mrtr.AskOption for an elicitation whose asker reads
// the answer only through ContentJSON: an answer replayed from the call's
// state then comes without its Content map (ContentJSON still returns
// the content). typed.Form uses it.
var ContentJSON any
