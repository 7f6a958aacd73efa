package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/gen/adminapi"
	"github.com/apistack/apistack/gen/adminserver"
	"github.com/apistack/apistack/servers/internal/storeerr"
	"github.com/apistack/apistack/servers/restaurant"
)

// CreateRestaurant creates a restaurant.
func (s *Server) CreateRestaurant(ctx context.Context, req adminserver.CreateRestaurantRequestObject) (adminserver.CreateRestaurantResponseObject, error) {
	guid := ""
	if req.Body.Guid != nil {
		guid = *req.Body.Guid
	}
	r, err := s.cfg.Restaurant.CreateRestaurant(ctx, guid, req.Body.Name)
	if err != nil {
		return nil, about(err, sentences{storeerr.ErrAlreadyExists: fmt.Sprintf("restaurant %s exists already", guid)})
	}
	return adminserver.CreateRestaurant201JSONResponse(toAPIRestaurant(r, map[string]int{})), nil
}

// GetRestaurant returns a restaurant with its entity counts.
func (s *Server) GetRestaurant(ctx context.Context, req adminserver.GetRestaurantRequestObject) (adminserver.GetRestaurantResponseObject, error) {
	r, err := s.cfg.Restaurant.Restaurant(ctx, req.RestaurantGuid)
	if err != nil {
		return nil, notFound(err, "restaurant %s does not exist", req.RestaurantGuid)
	}
	counts, err := s.cfg.Restaurant.Counts(ctx, r.GUID)
	if err != nil {
		return nil, err
	}
	return adminserver.GetRestaurant200JSONResponse(toAPIRestaurant(r, counts)), nil
}

// ImportRestaurantConfiguration imports a configuration document the strict
// handler decoded. The server's routes use streamedImport's instead, which
// reads the document as it comes; this one serves callers of the strict
// interface itself.
func (s *Server) ImportRestaurantConfiguration(ctx context.Context, req adminserver.ImportRestaurantConfigurationRequestObject) (adminserver.ImportRestaurantConfigurationResponseObject, error) {
	data, err := json.Marshal(req.Body)
	if err != nil {
		return nil, fmt.Errorf("encode configuration: %w", err)
	}
	res, err := s.importInto(ctx, req.RestaurantGuid, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return adminserver.ImportRestaurantConfiguration200JSONResponse(res), nil
}

// streamedImport serves the admin API, with the configuration import read
// from the request as it comes: the validation middleware leaves that body
// unread (validation.Options.StreamedBodies), and the restaurant server
// decodes, checks and writes it entity by entity, so that a document of
// up to 32 MiB is never held whole, decoded or copied.
type streamedImport struct {
	adminserver.ServerInterface
	s *Server
}

// ImportRestaurantConfiguration imports the request's configuration
// document as it is read.
func (h streamedImport) ImportRestaurantConfiguration(c echo.Context, restaurantGUID adminapi.RestaurantGUID) error {
	if !h.s.serves("restaurant") {
		return errNotFound("%s", notServed["restaurant"])
	}
	res, err := h.s.importInto(c.Request().Context(), restaurantGUID, c.Request().Body)
	if err != nil {
		return err
	}
	return adminserver.ImportRestaurantConfiguration200JSONResponse(res).VisitImportRestaurantConfigurationResponse(c.Response())
}

// GenerateRestaurantDemo imports a generated demo configuration.
func (s *Server) GenerateRestaurantDemo(ctx context.Context, req adminserver.GenerateRestaurantDemoRequestObject) (adminserver.GenerateRestaurantDemoResponseObject, error) {
	seed := uint64(1)
	if req.Body.Seed != nil {
		seed = uint64(*req.Body.Seed)
	}
	data, err := json.Marshal(restaurant.Demo(restaurant.DemoOptions{MenuItems: req.Body.MenuItems, Seed: seed}))
	if err != nil {
		return nil, fmt.Errorf("encode demo configuration: %w", err)
	}
	res, err := s.importInto(ctx, req.RestaurantGuid, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return adminserver.GenerateRestaurantDemo200JSONResponse(res), nil
}

// importInto imports a configuration document into the restaurant guid.
func (s *Server) importInto(ctx context.Context, guid string, document io.Reader) (adminapi.RestaurantImportResult, error) {
	res, err := s.cfg.Restaurant.ImportFrom(ctx, guid, document)
	var ie *restaurant.ImportError
	switch {
	case errors.As(err, &ie):
		return adminapi.RestaurantImportResult{}, errBadRequest("%s", ie.Error())
	case err != nil:
		return adminapi.RestaurantImportResult{}, notFound(err, "restaurant %s does not exist", guid)
	}
	return adminapi.RestaurantImportResult{Total: res.Total, Counts: res.Counts}, nil
}

// ArchiveRestaurantEntity archives one entity.
func (s *Server) ArchiveRestaurantEntity(ctx context.Context, req adminserver.ArchiveRestaurantEntityRequestObject) (adminserver.ArchiveRestaurantEntityResponseObject, error) {
	if err := hideErr(s.cfg.Restaurant.Archive(ctx, req.RestaurantGuid, string(req.Resource), req.EntityGuid), req.Resource, req.EntityGuid); err != nil {
		return nil, err
	}
	return adminserver.ArchiveRestaurantEntity204Response{}, nil
}

// RemoveRestaurantEntity removes one entity.
func (s *Server) RemoveRestaurantEntity(ctx context.Context, req adminserver.RemoveRestaurantEntityRequestObject) (adminserver.RemoveRestaurantEntityResponseObject, error) {
	if err := hideErr(s.cfg.Restaurant.Remove(ctx, req.RestaurantGuid, string(req.Resource), req.EntityGuid), req.Resource, req.EntityGuid); err != nil {
		return nil, err
	}
	return adminserver.RemoveRestaurantEntity204Response{}, nil
}

func hideErr(err error, resource adminapi.RestaurantResource, guid string) error {
	return notFound(err, "no %s %s in this restaurant", resource, guid)
}

// CreateRestaurantClient creates an API client granted restaurants.
func (s *Server) CreateRestaurantClient(ctx context.Context, req adminserver.CreateRestaurantClientRequestObject) (adminserver.CreateRestaurantClientResponseObject, error) {
	c, err := s.cfg.Restaurant.CreateClient(ctx, req.Body.Name, req.Body.Restaurants)
	if err != nil {
		return nil, notFound(err, "a granted restaurant does not exist: %s", err)
	}
	return adminserver.CreateRestaurantClient201JSONResponse{ClientId: c.ClientID, ClientSecret: c.ClientSecret, Name: c.Name, Restaurants: c.Restaurants}, nil
}

func toAPIRestaurant(r restaurant.Restaurant, counts map[string]int) adminapi.RestaurantRestaurant {
	return adminapi.RestaurantRestaurant{Guid: r.GUID, Name: r.Name, CreatedAt: r.CreatedAt.UTC(), Counts: counts}
}
