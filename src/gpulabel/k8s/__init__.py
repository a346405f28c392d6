"""Pure mirrors of upstream Kubernetes rules, message for message (nothing GPU-specific)."""
