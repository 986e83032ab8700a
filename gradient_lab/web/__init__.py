"""The web layer: routes/ and schemas/, one module per part of the product."""
