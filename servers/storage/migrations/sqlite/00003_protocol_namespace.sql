-- +goose Up
-- GET answers in the protocol's namespace. Configurations stored before were
-- re-encoded by the service in apistack's namespace, declared once on the root
-- element (xmlns="..." with no prefix, every child inheriting it), so the
-- namespace declaration is all that changes.
UPDATE lifecycle_configurations
   SET document = REPLACE(document,
       '<LifecycleConfiguration xmlns="http://cloud.apistack.dev/doc/2006-03-01/">',
       '<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">');

-- +goose Down
UPDATE lifecycle_configurations
   SET document = REPLACE(document,
       '<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">',
       '<LifecycleConfiguration xmlns="http://cloud.apistack.dev/doc/2006-03-01/">');
