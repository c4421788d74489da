"""JVM parts sparkmirror runs itself: Maven-resolved jars, local KRaft clusters, the demo."""
