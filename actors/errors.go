package actors

import (
	"fmt"

	"github.com/pi-actors/pi-actors/verbs/wire"
)

func usageErr(format string, args ...any) *wire.Error {
	return &wire.Error{Code: "usage", Exit: 64, Message: fmt.Sprintf(format, args...)}
}

func invalidErr(format string, args ...any) *wire.Error {
	return &wire.Error{Code: "invalid_data", Exit: 65, Message: fmt.Sprintf(format, args...)}
}
