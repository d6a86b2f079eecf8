-- Orders and their items. An Idempotency-Key is unique when present; the
-- fingerprint of the request body tells a replay from a reuse.
CREATE TABLE orders (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    customer_id      text        NOT NULL,
    total_cents      bigint      NOT NULL CHECK (total_cents >= 0),
    idempotency_key  text        UNIQUE,
    fingerprint      bytea       NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE order_items (
    order_id          bigint NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    line              int    NOT NULL,
    sku               text   NOT NULL,
    quantity          int    NOT NULL CHECK (quantity > 0),
    unit_price_cents  bigint NOT NULL CHECK (unit_price_cents >= 0),
    PRIMARY KEY (order_id, line)
);
