-- CONTRACT §11, Dynamic registration: the tenant setting, off by default.
ALTER TABLE "tenants" ADD COLUMN "dynamic_client_registration" boolean DEFAULT false NOT NULL;