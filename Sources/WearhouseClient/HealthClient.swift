public enum WearhouseClientPlaceholder {}
