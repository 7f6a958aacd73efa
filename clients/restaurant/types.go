package restaurant

// The client's own types for what the API returns: the wire fields under Go
// names (GUID, ExternalID, URL, not the generator's Guid, ExternalId, Url),
// decoded straight from the JSON answers, so neither the generator's naming
// nor a generator upgrade becomes this package's API. TestOwnTypes_MatchTheSpec
// keeps every field of the spec's schemas here.

// AlternatePaymentType is an alternate payment type of the restaurant's configuration.
type AlternatePaymentType struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType string `json:"entityType"`
	// ExternalID is an identifier prefixed by its naming authority
	// (`authority:id`); empty when the entity has none.
	ExternalID string `json:"externalId,omitempty"`
	Name       string `json:"name"`
}

// BreakType is a break type of the restaurant's configuration.
type BreakType struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType string `json:"entityType"`
	Name       string `json:"name"`
	Active     bool   `json:"active"`
	// BreakIntervalHrs: null when missed breaks are not tracked.
	BreakIntervalHrs *int `json:"breakIntervalHrs"`
	// BreakIntervalMins: null when missed breaks are not tracked.
	BreakIntervalMins *int `json:"breakIntervalMins"`
	// Duration: minutes.
	Duration           int  `json:"duration"`
	EnforceMinimumTime bool `json:"enforceMinimumTime"`
	Paid               bool `json:"paid"`
	// TrackBreakAcknowledgement: acknowledgements are not collected when `trackMissedBreaks` is false.
	TrackBreakAcknowledgement bool `json:"trackBreakAcknowledgement"`
	TrackMissedBreaks         bool `json:"trackMissedBreaks"`
}

// CashDrawer is a cash drawer of the restaurant's configuration.
type CashDrawer struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType string    `json:"entityType"`
	Printer    Reference `json:"printer"`
}

// DiningOption is a dining option of the restaurant's configuration.
type DiningOption struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType string `json:"entityType"`
	// ExternalID is an identifier prefixed by its naming authority
	// (`authority:id`); empty when the entity has none.
	ExternalID string `json:"externalId,omitempty"`
	Name       string `json:"name"`
	// Behavior: tAKE_OUT and DELIVERY need a `customer` on the order; DELIVERY also needs
	// `deliveryInfo`.
	Behavior DiningOptionBehavior `json:"behavior"`
	Curbside bool                 `json:"curbside"`
}

// Discount is a discount of the restaurant's configuration.
type Discount struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType string `json:"entityType"`
	Name       string `json:"name"`
	Active     bool   `json:"active"`
	// Amount: for FIXED discounts.
	Amount *float64 `json:"amount"`
	// FixedTotal: the total the discounted items cost, for FIXED_TOTAL discounts.
	FixedTotal *float64 `json:"fixedTotal"`
	// ItemPickingPriority says which items an item-level discount picks first.
	ItemPickingPriority *ItemPickingPriority `json:"itemPickingPriority"`
	// NonExclusive: whether the discount combines with others.
	NonExclusive bool `json:"nonExclusive"`
	// Percentage: for PERCENT discounts.
	Percentage *float64 `json:"percentage"`
	// SelectionType: what the discount applies to; CHECK, ITEM and BOGO among others.
	SelectionType string       `json:"selectionType"`
	Type          DiscountType `json:"type"`
}

// Menu is a menu of the restaurant's configuration.
type Menu struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType string `json:"entityType"`
	// ExternalID is an identifier prefixed by its naming authority
	// (`authority:id`); empty when the entity has none.
	ExternalID string `json:"externalId,omitempty"`
	Name       string `json:"name"`
	// Groups: the menu's top-level groups.
	Groups []ExternalReference `json:"groups"`
	Images []Image             `json:"images"`
	// OrderableOnline says whether the entity can be ordered online.
	OrderableOnline OrderableOnline `json:"orderableOnline"`
	// UnitOfMeasure is the unit an item is sold by (`NONE` when it is sold by the piece).
	UnitOfMeasure UnitOfMeasure `json:"unitOfMeasure"`
	// Visibility says where the entity is shown (`POS_ONLY`, everywhere, or hidden).
	Visibility Visibility `json:"visibility"`
}

// MenuGroup is a menu group of the restaurant's configuration.
type MenuGroup struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType string `json:"entityType"`
	// ExternalID is an identifier prefixed by its naming authority
	// (`authority:id`); empty when the entity has none.
	ExternalID           string              `json:"externalId,omitempty"`
	Name                 string              `json:"name"`
	Images               []Image             `json:"images"`
	InheritOptionGroups  bool                `json:"inheritOptionGroups"`
	InheritUnitOfMeasure bool                `json:"inheritUnitOfMeasure"`
	Items                []ExternalReference `json:"items"`
	Menu                 ExternalReference   `json:"menu"`
	OptionGroups         []ExternalReference `json:"optionGroups"`
	// OrderableOnline says whether the entity can be ordered online.
	OrderableOnline OrderableOnline `json:"orderableOnline"`
	// Parent: the enclosing group (an ExternalReference); null for a top-level group.
	Parent    *ExternalReference  `json:"parent"`
	Subgroups []ExternalReference `json:"subgroups"`
	// UnitOfMeasure is the unit an item is sold by (`NONE` when it is sold by the piece).
	UnitOfMeasure UnitOfMeasure `json:"unitOfMeasure"`
	// Visibility says where the entity is shown (`POS_ONLY`, everywhere, or hidden).
	Visibility Visibility `json:"visibility"`
}

// MenuItem is a menu item of the restaurant's configuration.
type MenuItem struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType string `json:"entityType"`
	// ExternalID is an identifier prefixed by its naming authority
	// (`authority:id`); empty when the entity has none.
	ExternalID           string              `json:"externalId,omitempty"`
	Name                 string              `json:"name"`
	Calories             *int                `json:"calories"`
	Images               []Image             `json:"images"`
	InheritOptionGroups  bool                `json:"inheritOptionGroups"`
	InheritUnitOfMeasure bool                `json:"inheritUnitOfMeasure"`
	OptionGroups         []ExternalReference `json:"optionGroups"`
	// OrderableOnline says whether the entity can be ordered online.
	OrderableOnline OrderableOnline `json:"orderableOnline"`
	PLU             string          `json:"plu"`
	SKU             string          `json:"sku"`
	Type            MenuItemType    `json:"type"`
	// UnitOfMeasure is the unit an item is sold by (`NONE` when it is sold by the piece).
	UnitOfMeasure UnitOfMeasure `json:"unitOfMeasure"`
	// Visibility says where the entity is shown (`POS_ONLY`, everywhere, or hidden).
	Visibility Visibility `json:"visibility"`
}

// MenuOptionGroup is a menu option group of the restaurant's configuration.
type MenuOptionGroup struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType string `json:"entityType"`
	// ExternalID is an identifier prefixed by its naming authority
	// (`authority:id`); empty when the entity has none.
	ExternalID string `json:"externalId,omitempty"`
	Name       string `json:"name"`
	// MaxSelections: null means no maximum.
	MaxSelections *int                `json:"maxSelections"`
	MinSelections int                 `json:"minSelections"`
	Options       []ExternalReference `json:"options"`
}

// NoSaleReason is a no-sale reason of the restaurant's configuration.
type NoSaleReason struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType string `json:"entityType"`
	Name       string `json:"name"`
}

// PayoutReason is a payout reason of the restaurant's configuration.
type PayoutReason struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType string `json:"entityType"`
	Name       string `json:"name"`
}

// PreModifier is a pre-modifier of the restaurant's configuration.
type PreModifier struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType string `json:"entityType"`
	Name       string `json:"name"`
	// BasePrice: added to the modifier price when `scalePrice` is false.
	BasePrice float64 `json:"basePrice"`
	// DisplayMode: where the pre-modifier is shown relative to the modifier name.
	DisplayMode PreModifierDisplayMode `json:"displayMode"`
	Parent      Reference              `json:"parent"`
	// ScaleFactor: multiplies the modifier price when `scalePrice` is true.
	ScaleFactor float32 `json:"scaleFactor"`
	// ScalePrice: true multiplies the modifier price by `scaleFactor`; false adds `basePrice`.
	ScalePrice bool `json:"scalePrice"`
}

// PreModifierGroup is a pre-modifier group of the restaurant's configuration.
type PreModifierGroup struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType string `json:"entityType"`
	Name       string `json:"name"`
	// IsDefault: only one group is the default at a time.
	IsDefault bool `json:"isDefault"`
}

// PriceGroup is a price group of the restaurant's configuration.
type PriceGroup struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType string `json:"entityType"`
	Name       string `json:"name"`
}

// Printer is a printer of the restaurant's configuration.
type Printer struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType string `json:"entityType"`
	Name       string `json:"name"`
}

// RestaurantService is a restaurant service of the restaurant's configuration.
type RestaurantService struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType string `json:"entityType"`
	// Name: a meal service, such as lunch or dinner.
	Name string `json:"name"`
}

// RevenueCenter is a revenue center of the restaurant's configuration.
type RevenueCenter struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType  string `json:"entityType"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// SalesCategory is a sales category of the restaurant's configuration.
type SalesCategory struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType string `json:"entityType"`
	Name       string `json:"name"`
}

// ServiceArea is a service area of the restaurant's configuration.
type ServiceArea struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType    string            `json:"entityType"`
	Name          string            `json:"name"`
	RevenueCenter ExternalReference `json:"revenueCenter"`
}

// ServiceCharge is a service charge of the restaurant's configuration.
type ServiceCharge struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType string `json:"entityType"`
	// ExternalID is an identifier prefixed by its naming authority
	// (`authority:id`); empty when the entity has none.
	ExternalID string `json:"externalId,omitempty"`
	Name       string `json:"name"`
	// Amount: USD, for FIXED charges.
	Amount          *float64                `json:"amount"`
	AmountType      ServiceChargeAmountType `json:"amountType"`
	ApplicableTaxes []TaxRate               `json:"applicableTaxes"`
	Criteria        ServiceChargeCriteria   `json:"criteria"`
	Gratuity        bool                    `json:"gratuity"`
	// Percent: percent of the pre-discount check, for PERCENT charges.
	Percent *float64 `json:"percent"`
	// ServiceChargeCalculation: null for charges that are not a percentage.
	ServiceChargeCalculation *ServiceChargeCalculation `json:"serviceChargeCalculation"`
	Taxable                  bool                      `json:"taxable"`
}

// Table is a table of the restaurant's configuration.
type Table struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType    string            `json:"entityType"`
	Name          string            `json:"name"`
	RevenueCenter ExternalReference `json:"revenueCenter"`
	ServiceArea   Reference         `json:"serviceArea"`
}

// TaxRate is a tax rate of the restaurant's configuration.
type TaxRate struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType          string               `json:"entityType"`
	Name                string               `json:"name"`
	ConditionalTaxRates []ConditionalTaxRate `json:"conditionalTaxRates"`
	IsDefault           bool                 `json:"isDefault"`
	// Rate: null when `type` is NONE.
	Rate *float64 `json:"rate"`
	// RoundingType: null unless `type` is PERCENT.
	RoundingType *TaxRoundingType `json:"roundingType"`
	TaxTable     []TaxTableRow    `json:"taxTable"`
	Type         TaxRateType      `json:"type"`
}

// TipWithholding is the restaurant's tip withholding setting.
type TipWithholding struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType string `json:"entityType"`
	Enabled    bool   `json:"enabled"`
	// Percentage: percent of credit card tips withheld; ignored when `enabled` is false.
	Percentage float64 `json:"percentage"`
}

// VoidReason is a void reason of the restaurant's configuration.
type VoidReason struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType string `json:"entityType"`
	Name       string `json:"name"`
}

// Reference refers to another entity of the configuration.
type Reference struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType string `json:"entityType"`
}

// ExternalReference refers to another entity of the configuration, with its external id.
type ExternalReference struct {
	// GUID is the platform GUID (a UUID).
	GUID string `json:"guid"`
	// EntityType names the type of the entity, such as `MenuItem`.
	EntityType string `json:"entityType"`
	// ExternalID is an identifier prefixed by its naming authority
	// (`authority:id`); empty when the entity has none.
	ExternalID string `json:"externalId,omitempty"`
}

// Image is an image of a menu, group or item.
type Image struct {
	// URL: where the image is served.
	URL string `json:"url"`
}

// ConditionalTaxRate overrides the default rate in a situation such as a dining option.
type ConditionalTaxRate struct {
	Condition string `json:"condition"`
	// Rate: percent.
	Rate float64 `json:"rate"`
}

// TaxTableRow is one bracket of a TABLE tax rate.
type TaxTableRow struct {
	// End: currency.
	End     float64 `json:"end"`
	Pattern bool    `json:"pattern"`
	// Start: currency.
	Start float64 `json:"start"`
	// Tax: currency.
	Tax float64 `json:"tax"`
}

// ServiceChargeCriteria says when a service charge applies.
type ServiceChargeCriteria struct {
	// Delivery: deliveries only.
	Delivery bool `json:"delivery"`
	// MaxCheckAmount: waived above this; null means no maximum.
	MaxCheckAmount *float64 `json:"maxCheckAmount"`
	// MinCheckAmount: applies only when the pre-discount check is at least this.
	MinCheckAmount float64 `json:"minCheckAmount"`
	// MinDeliveryDistance: null means none.
	MinDeliveryDistance *float64 `json:"minDeliveryDistance"`
	// Takeout: applied automatically to takeout orders.
	Takeout bool `json:"takeout"`
}

// DiningOptionBehavior is how an order is served: TAKE_OUT and DELIVERY need a
// `customer` on the order; DELIVERY also needs `deliveryInfo`.
type DiningOptionBehavior string

// The values of DiningOptionBehavior.
const (
	DiningOptionBehaviorDelivery DiningOptionBehavior = "DELIVERY"
	DiningOptionBehaviorDineIn   DiningOptionBehavior = "DINE_IN"
	DiningOptionBehaviorTakeOut  DiningOptionBehavior = "TAKE_OUT"
)

// DiscountType is how a discount is computed.
type DiscountType string

// The values of DiscountType.
const (
	DiscountTypeBOGO        DiscountType = "BOGO"
	DiscountTypeFixed       DiscountType = "FIXED"
	DiscountTypeFixedTotal  DiscountType = "FIXED_TOTAL"
	DiscountTypeOpenFixed   DiscountType = "OPEN_FIXED"
	DiscountTypeOpenPercent DiscountType = "OPEN_PERCENT"
	DiscountTypePercent     DiscountType = "PERCENT"
)

// ItemPickingPriority says which items an item-level discount picks first.
type ItemPickingPriority string

// The values of ItemPickingPriority.
const (
	ItemPickingPriorityFirst          ItemPickingPriority = "FIRST"
	ItemPickingPriorityLeastExpensive ItemPickingPriority = "LEAST_EXPENSIVE"
	ItemPickingPriorityMostExpensive  ItemPickingPriority = "MOST_EXPENSIVE"
)

// MenuItemType is the kind of a menu item.
type MenuItemType string

// The values of MenuItemType.
const (
	MenuItemTypeGiftCard MenuItemType = "GIFT_CARD"
	MenuItemTypeNone     MenuItemType = "NONE"
)

// OrderableOnline says whether the entity can be ordered online.
type OrderableOnline string

// The values of OrderableOnline.
const (
	OrderableOnlineNo  OrderableOnline = "NO"
	OrderableOnlineYes OrderableOnline = "YES"
)

// PreModifierDisplayMode says where the pre-modifier is shown relative to the modifier name.
type PreModifierDisplayMode string

// The values of PreModifierDisplayMode.
const (
	PreModifierDisplayModePrefix PreModifierDisplayMode = "PREFIX"
	PreModifierDisplayModeSuffix PreModifierDisplayMode = "SUFFIX"
)

// ServiceChargeAmountType is how a service charge's amount is set.
type ServiceChargeAmountType string

// The values of ServiceChargeAmountType.
const (
	ServiceChargeAmountTypeFixed   ServiceChargeAmountType = "FIXED"
	ServiceChargeAmountTypeOpen    ServiceChargeAmountType = "OPEN"
	ServiceChargeAmountTypePercent ServiceChargeAmountType = "PERCENT"
)

// ServiceChargeCalculation says when a percentage service charge is computed.
type ServiceChargeCalculation string

// The values of ServiceChargeCalculation.
const (
	ServiceChargeCalculationPostDiscount ServiceChargeCalculation = "POST_DISCOUNT"
	ServiceChargeCalculationPreDiscount  ServiceChargeCalculation = "PRE_DISCOUNT"
)

// TaxRateType is how a tax is computed.
type TaxRateType string

// The values of TaxRateType.
const (
	TaxRateTypeExternal TaxRateType = "EXTERNAL"
	TaxRateTypeFixed    TaxRateType = "FIXED"
	TaxRateTypeNone     TaxRateType = "NONE"
	TaxRateTypePercent  TaxRateType = "PERCENT"
	TaxRateTypeTable    TaxRateType = "TABLE"
)

// TaxRoundingType says how a percentage tax is rounded.
type TaxRoundingType string

// The values of TaxRoundingType.
const (
	TaxRoundingTypeAlwaysDown TaxRoundingType = "ALWAYS_DOWN"
	TaxRoundingTypeAlwaysUp   TaxRoundingType = "ALWAYS_UP"
	TaxRoundingTypeHalfEven   TaxRoundingType = "HALF_EVEN"
	TaxRoundingTypeHalfUp     TaxRoundingType = "HALF_UP"
)

// UnitOfMeasure is the unit an item is sold by (`NONE` when it is sold by the piece).
type UnitOfMeasure string

// The values of UnitOfMeasure.
const (
	UnitOfMeasureG    UnitOfMeasure = "G"
	UnitOfMeasureKg   UnitOfMeasure = "KG"
	UnitOfMeasureLb   UnitOfMeasure = "LB"
	UnitOfMeasureNone UnitOfMeasure = "NONE"
	UnitOfMeasureOz   UnitOfMeasure = "OZ"
)

// Visibility says where the entity is shown (`POS_ONLY`, everywhere, or hidden).
type Visibility string

// The values of Visibility.
const (
	VisibilityAll     Visibility = "ALL"
	VisibilityNone    Visibility = "NONE"
	VisibilityPOSOnly Visibility = "POS_ONLY"
)
