package linkheader_test

import (
	"fmt"

	"github.com/apistack/apistack/clients/internal/linkheader"
)

func Example() {
	links, err := linkheader.Parse(
		`</pams?fields=id,name&cursor=c2>; rel="next", </pams?fields=id,name&cursor=c9>; rel="last"`,
		`</pams?fields=id,name>; rel=first`,
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	if next, ok := linkheader.Find(links, "next"); ok {
		fmt.Println("next:", next.URI)
	}
	fmt.Println(linkheader.Format(linkheader.Link{URI: "/pams?cursor=c3", Rels: []string{"next"}}))
	// Output:
	// next: /pams?fields=id,name&cursor=c2
	// </pams?cursor=c3>; rel="next"
}
