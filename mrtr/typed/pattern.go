package typed

import (
	"errors"
	"fmt"
	"regexp"
	"sync"

	"github.com/go-playground/validator/v10"
)

// registeredPattern is a validate tag added by RegisterPattern.
type registeredPattern struct {
	pattern string
	re      *regexp.Regexp
	must    string // what the rule asks, for problem messages
}

var patterns sync.Map // tag name → *registeredPattern

func lookupPattern(tag string) (*registeredPattern, bool) {
	p, ok := patterns.Load(tag)
	if !ok {
		return nil, false
	}
	return p.(*registeredPattern), true
}

var tagNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// RegisterPattern adds a validate tag, usable by every type this package
// binds, that holds a string to a regular expression: the tag is enforced
// with Go's regexp package, like any validate tag, and generated input
// schemas carry the expression as the JSON Schema keyword "pattern" (see
// "Rules and schemas" in the package documentation). must says what the
// rule asks, for problem messages: "must be one line of visible text"
// gives "audience must be one line of visible text (rule "oneline")".
//
// Clients read the pattern as an ECMA-262 regular expression, the server
// as RE2: write one that means the same in both (ASCII classes and ranges
// such as [^\x00-\x1f]; no \s, \w, \d or \b, which are ASCII in RE2 and
// wider in ECMA-262; no lookaround or backreferences, which RE2 lacks).
// The match is unanchored, as JSON Schema's is: anchor with ^ and $.
//
// The tag applies to strings, pointers to strings and, after dive, their
// elements. Register every tag before the types that use it are bound
// (typically in an init function): like validator's own registration it
// is not safe while values are being validated. A tag that validator
// already knows, or one registered before, is refused.
func RegisterPattern(tag, pattern, must string) error {
	if !tagNameRE.MatchString(tag) {
		return fmt.Errorf("typed: pattern tag %q must be lower-case letters, digits and _", tag)
	}
	if must == "" {
		return fmt.Errorf("typed: pattern tag %q: say what the rule asks", tag)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return fmt.Errorf("typed: pattern tag %q: %w", tag, err)
	}
	if _, ok := lookupPattern(tag); ok || knownTag(tag) {
		return fmt.Errorf("typed: validate tag %q already exists", tag)
	}
	err = validate.RegisterValidation(tag, func(fl validator.FieldLevel) bool {
		return re.MatchString(fl.Field().String())
	})
	if err != nil {
		return fmt.Errorf("typed: pattern tag %q: %w", tag, err)
	}
	patterns.Store(tag, &registeredPattern{pattern: pattern, re: re, must: must})
	return nil
}

// knownTag reports whether validator knows tag, as a rule or an alias.
func knownTag(tag string) (known bool) {
	defer func() {
		if r := recover(); r != nil {
			known = false
		}
	}()
	var invalid *validator.InvalidValidationError
	err := validate.Var("", "omitempty,"+tag)
	return err == nil || !errors.As(err, &invalid)
}
